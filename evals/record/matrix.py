"""Many versions of the agent on one plan, in one table (`python -m evals matrix`), typed:
rows are items, columns are versions (a model, or a point's frozen agent), a cell is an item's
statuses over its repetitions with its pass rate; per column what its attempts took, and
each column paired with a baseline column (evals/report/matrix.py makes it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from evals.record.comparison import OUTCOMES, SideSpend
from evals.record.results import Status


class Cell(BaseModel):
    """One item in one column: its statuses, repetition by repetition, and how many of its
    decided repetitions passed (PASS or FLAKY; FAIL did not; UNDECIDED, ERROR and SKIPPED
    are not decided and count in neither)."""

    model_config = ConfigDict(extra="forbid")
    statuses: list[Status]
    passed: int
    decided: int

    @property
    def pass_rate(self) -> float | None:
        """None: no repetition was decided, so nothing says how often it passes."""
        return self.passed / self.decided if self.decided else None

    @property
    def status(self) -> str:
        """One word: the status every repetition shares, or MIXED."""
        return self.statuses[0] if len(set(self.statuses)) == 1 else "MIXED"


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    file: str
    group: str | None = None
    cells: dict[str, Cell]  # by column label; a column that has no result for it: absent


class Column(BaseModel):
    """One version: its label, what it runs, its stored run, and what its attempts took."""

    model_config = ConfigDict(extra="forbid")
    label: str
    ref: str  # the model id, or "point NAME (model)"
    run_id: str | None
    totals: dict[str, int]  # items (each repetition one) per status
    spend: SideSpend
    cost_usd: float | None  # the column's whole chat cost (None: some attempt had no price)
    calls_made: int
    calls_replayed: int
    # Items whose simulated visitor failed (UNDECIDED for that, not for the assistant).
    visitor_failed: int = 0

    @property
    def replayed_share(self) -> float | None:
        calls = self.calls_made + self.calls_replayed
        return self.calls_replayed / calls if calls else None


class Versus(BaseModel):
    """One column paired with the baseline column, per item, as `compare` pairs two runs; its
    McNemar p-value, and that p-value with Holm's correction across the columns."""

    model_config = ConfigDict(extra="forbid")
    label: str
    counts: dict[str, int]  # items per outcome (each of OUTCOMES)
    improved: list[str]
    regressed: list[str]
    p_value: float | None
    p_holm: float | None
    verdict: str


class Matrix(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan_fingerprint: str | None
    baseline: str  # the label of the baseline column
    columns: list[Column]
    rows: list[Row]
    versus: list[Versus]  # every column but the baseline, in column order

    @property
    def labels(self) -> list[str]:
        return [c.label for c in self.columns]


__all__ = ["OUTCOMES", "Cell", "Column", "Matrix", "Row", "Versus"]
