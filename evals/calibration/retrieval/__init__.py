"""Retrieval measured against labelled questions, apart from any chat model: manual search
(`manuals.yaml`), fused and each half alone. `python -m evals retrieval`."""

from evals.calibration.retrieval.labelled import (
    MANUALS_SET,
    Labelled,
    RetrievalSetError,
    fixture_manuals,
    load_set,
)

__all__ = ["MANUALS_SET", "Labelled", "RetrievalSetError", "fixture_manuals", "load_set"]
