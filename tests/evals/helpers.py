"""Small helpers the evals tests share."""

from __future__ import annotations

from evals.load.cases import Case
from evals.load.selection import select_cases
from evals.record.fingerprint import Selection


def select(cases: list[Case], names: str) -> list[Case]:
    """The cases a comma list of files or ids names, as EVAL_CASES would."""
    return select_cases(cases, Selection.of(names))
