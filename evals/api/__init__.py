"""The suite as a library: typed functions that run, compare, gate and re-assess, and return
the typed records. The command line (`python -m evals`), the workspace, the MCP tools and the
benches call these; so can a script or a notebook (docs/api.md).

    from evals.api import RunOptions, Selection, run
    result = run(RunOptions(selection=Selection.of("catalog-lookup"), model="openai/gpt-4o"))
    print(result.record.totals, result.exit_code)

Each function says what it does on stdout and its progress on stderr, as the command does, and
raises ApiError with the message a person needs when it cannot go on. Each runs its own event
loop: from code that already runs one (a notebook cell), call it in a thread
(`await asyncio.to_thread(run, options)`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Where each name lives. A name is imported when it is first used, so a module that needs
# only ApiError or the options (the command line's flags) does not pay for running a suite.
_WHERE = {
    "ApiError": "errors", "JudgeChoice": "options", "RunOptions": "options",
    "RunResult": "runs", "run": "runs", "resume": "rerun", "rerun_failed": "rerun",
    "save_point": "points", "point_from_run": "points", "load_point": "points",
    "list_points": "points", "Compared": "pairing", "compare": "pairing",
    "compare_runs": "pairing", "Gated": "gating", "gate": "gating", "Rescored": "assess",
    "Rejudged": "assess", "rescore": "assess", "rejudge": "assess",
    "Calibrated": "calibrating", "calibrate": "calibrating", "impact": "changes",
    "Matrixed": "matrix", "matrix": "matrix", "matrix_runs": "matrix",
}
# exported under another name than its module's
_NAMED = {"calibrate": "calibrate_judge", "impact": "what_changes"}
_ELSEWHERE = {"Selection": "evals.record.fingerprint", "RepeatRule": "evals.record.repetitions"}

__all__ = [
    "ApiError", "Calibrated", "Compared", "Gated", "JudgeChoice", "Matrixed", "Rejudged",
    "RepeatRule", "Rescored", "RunOptions", "RunResult", "Selection", "calibrate", "compare",
    "compare_runs", "gate", "impact", "list_points", "load_point", "matrix", "matrix_runs",
    "point_from_run", "rejudge", "rerun_failed", "rescore", "resume", "run", "save_point",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module = importlib.import_module(f"evals.api.{_WHERE[name]}")
        return getattr(module, _NAMED.get(name, name))
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'evals.api' has no attribute {name!r}")


if TYPE_CHECKING:
    from evals.api.assess import Rejudged, Rescored, rejudge, rescore
    from evals.api.calibrating import Calibrated
    from evals.api.calibrating import calibrate_judge as calibrate
    from evals.api.changes import what_changes as impact
    from evals.api.errors import ApiError
    from evals.api.gating import Gated, gate
    from evals.api.matrix import Matrixed, matrix, matrix_runs
    from evals.api.options import JudgeChoice, RunOptions
    from evals.api.pairing import Compared, compare, compare_runs
    from evals.api.points import list_points, load_point, point_from_run, save_point
    from evals.api.rerun import rerun_failed, resume
    from evals.api.runs import RunResult, run
    from evals.record.fingerprint import Selection
    from evals.record.repetitions import RepeatRule
