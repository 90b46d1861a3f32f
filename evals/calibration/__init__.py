"""The team's labelled replies for calibrating a judge on this suite (makerspace.yaml)."""
