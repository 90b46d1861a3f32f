"""A comparison of two runs of one plan, typed: per pair and per item, improved, regressed,
unchanged or uncertain (evals/report/compare.py makes it; the store keeps it), and what each
side's attempts took (evals/report/spend.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["improved", "regressed", "unchanged", "uncertain"]
OUTCOMES: tuple[Outcome, ...] = ("improved", "regressed", "unchanged", "uncertain")


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    file: str
    repetition: int
    baseline: str  # status, or "—" when that side has no result
    current: str
    outcome: Outcome
    why: str = ""


class SideSpend(BaseModel):
    """What one side's attempts took: latency over the attempts that measured it (none of
    their model calls replayed), and the cost per item (None: some attempt had no price)."""

    model_config = ConfigDict(extra="forbid")
    items: int
    attempts: int
    timed: int  # attempts whose latency was measured
    p50_s: float | None = None
    p95_s: float | None = None
    cost_per_item_usd: float | None = None
    unpriced: int = 0  # attempts whose cost is unknown


class Spend(BaseModel):
    model_config = ConfigDict(extra="forbid")
    baseline: SideSpend
    current: SideSpend


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")
    baseline_run: str | None
    current_run: str | None
    plan_fingerprint: str | None
    pairs: list[Pair]  # per item and repetition, for reading
    cases: dict[str, Outcome] = {}  # per item: what the counts and the test are made of
    counts: dict[str, int]  # items per outcome (each of OUTCOMES)
    recovered: dict[Literal["baseline", "current"], int]  # FLAKY per side
    p_value: float | None
    verdict: str
    spend: Spend | None = None  # None: stored before comparisons measured it
