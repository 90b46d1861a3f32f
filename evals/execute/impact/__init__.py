"""The impact of a change, before the run: which items today's agent, plan and fixtures would
ask the model something a baseline (a stored run, or a comparison point) was not asked, and
why. It compares the requests the run is about to send, so it lives with the stage that
sends them; the report says it (evals/report/impact.py)."""

from evals.execute.impact.baseline import Baseline, last_baseline, run_baseline
from evals.execute.impact.context import context_diff
from evals.execute.impact.inputs import InputChange, input_changes, plural
from evals.execute.impact.touched import (
    ContextChange,
    Impact,
    impact,
    settings_words,
    where_of,
)

__all__ = ["Baseline", "ContextChange", "Impact", "InputChange", "context_diff", "impact",
           "input_changes", "last_baseline", "plural", "run_baseline", "settings_words",
           "where_of"]
