"""Retrieval measured against labelled questions, apart from any chat model: manual search
(`manuals.yaml`), fused and each half alone, and catalogue search (`catalog.yaml`).
`python -m evals retrieval [--catalog]`."""

from evals.calibration.retrieval.catalog_measure import CatalogReport, measure_catalog
from evals.calibration.retrieval.catalog_set import (
    CATALOG_HOLDOUT,
    CATALOG_HOLDOUT_2,
    CATALOG_SET,
    LabelledRequest,
    load_requests,
)
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
from evals.calibration.retrieval.render import render, render_catalog

__all__ = ["CATALOG_HOLDOUT", "CATALOG_HOLDOUT_2", "CATALOG_SET", "DEPTH", "MANUALS_SET",
           "MODES", "CatalogReport", "Labelled", "LabelledRequest", "RetrievalReport",
           "RetrievalSetError", "figures", "fixture_manuals", "load_requests", "load_set",
           "measure_catalog", "measure_manuals", "render", "render_catalog", "report",
           "search_all"]
