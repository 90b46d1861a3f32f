"""A comparison of two runs of one plan, typed: per pair and per item, improved, regressed,
unchanged or uncertain (evals/report/compare.py makes it; the store keeps it)."""

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
