"""What the run store lists: runs, comparison points, comparisons, per-file counts and the
runs a workspace launch started, typed as the store reads them."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict

from evals.record.comparison import Comparison
from evals.record.results import Totals
from evals.record.run import RunStatus


class RunSummary(BaseModel):
    """A stored run, as `python -m evals runs` lists it."""

    model_config = ConfigDict(extra="forbid")
    id: str
    started_at: dt.datetime
    status: RunStatus
    model: str
    plan_fingerprint: str
    agent_fingerprint: str
    point: str | None
    totals: Totals | None
    rerun_of: str | None = None  # `run --failed`: the run it ran the misses of
    assessments: int = 0  # rescores and re-judgings stored beside its results


class PointSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    created_at: dt.datetime
    plan_fingerprint: str
    agent_fingerprint: str
    model: str | None


class _ComparisonRow(BaseModel):
    """What every listing of a stored comparison holds: which runs it paired, and when."""

    model_config = ConfigDict(extra="forbid")
    id: str
    created_at: dt.datetime
    point: str | None
    baseline_run: str
    current_run: str


class ComparisonSummary(_ComparisonRow):
    counts: dict[str, int] | None
    verdict: str | None


class StoredComparison(_ComparisonRow):
    """One stored comparison, with the runs it paired."""

    result: Comparison


class FileCount(BaseModel):
    """Per run and case file: the items that passed and those decided."""

    model_config = ConfigDict(extra="forbid")
    run_id: str
    file: str
    passed: int
    decided: int


class LaunchedRun(BaseModel):
    """A run a workspace launch started, with its finished items by status and its cost so far
    (None while no attempt has a known price)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    status: RunStatus
    point: str | None
    version: str | None
    items: int | None
    repeat: int | None
    counts: dict[str, int]
    cost: float | None
