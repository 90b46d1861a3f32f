"""Retrieval measured against labelled questions, apart from any chat model: manual search
(`manuals.yaml`), fused and each half alone. `python -m evals retrieval`."""

from evals.calibration.retrieval.labelled import (
    MANUALS_SET,
    Labelled,
    RetrievalSetError,
    fixture_manuals,
    load_set,
)
from evals.calibration.retrieval.measure import (
    DEPTH,
    MODES,
    RetrievalReport,
    figures,
    measure_manuals,
    report,
    search_all,
)
from evals.calibration.retrieval.render import render

__all__ = ["DEPTH", "MANUALS_SET", "MODES", "Labelled", "RetrievalReport", "RetrievalSetError",
           "figures", "fixture_manuals", "load_set", "measure_manuals", "render", "report",
           "search_all"]
