"""Chat composition and the tool-call loop: the one code path the app and the evals share."""
