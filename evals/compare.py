"""Pairing two runs of one plan: improved, regressed, unchanged, uncertain; and an exact
McNemar test on the discordant pairs.

Only matched first attempts that both completed and were decided are compared: a first attempt
that errored, a skipped case, or an undecided judged check makes the pair uncertain. Retries
never decide a pair; a case that recovered on its retry (FLAKY) is counted apart.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel
from scipy.stats import binomtest

from evals.results import Attempt, CaseResult, RunRecord

Outcome = Literal["improved", "regressed", "unchanged", "uncertain"]
ALPHA = 0.05


class Pair(BaseModel):
    id: str
    file: str
    repetition: int
    baseline: str  # status
    current: str
    outcome: Outcome
    why: str = ""


class Comparison(BaseModel):
    baseline_run: str | None
    current_run: str | None
    plan_fingerprint: str | None
    pairs: list[Pair]
    counts: dict[str, int]
    recovered: dict[str, int]  # FLAKY per side
    p_value: float | None
    verdict: str


def _first(result: CaseResult) -> Attempt | None:
    return result.attempts[0] if result.attempts else None


def _decided(result: CaseResult) -> tuple[bool | None, str]:
    """Whether the first attempt passed, or None with why it cannot be compared."""
    if result.status == "SKIPPED":
        return None, "skipped"
    first = _first(result)
    if first is None or first.broke:
        return None, "errored"
    if first.undecided:
        return None, "undecided judge"
    return first.passed, ""


def pair_results(baseline: list[CaseResult], current: list[CaseResult]) -> list[Pair]:
    base = {(r.id, r.repetition): r for r in baseline}
    pairs = []
    for r in current:
        b = base.get((r.id, r.repetition))
        if b is None:
            pairs.append(Pair(id=r.id, file=r.file, repetition=r.repetition, baseline="—",
                              current=r.status, outcome="uncertain", why="no baseline result"))
            continue
        bp, bwhy = _decided(b)
        cp, cwhy = _decided(r)
        if bp is None or cp is None:
            why = "; ".join(f"{side} {w}" for side, w in (("baseline", bwhy), ("current", cwhy))
                            if w)
            outcome: Outcome = "uncertain"
        else:
            why = ""
            outcome = "unchanged" if bp == cp else ("improved" if cp else "regressed")
        pairs.append(Pair(id=r.id, file=r.file, repetition=r.repetition, baseline=b.status,
                          current=r.status, outcome=outcome, why=why))
    return pairs


def mcnemar(improved: int, regressed: int) -> float | None:
    """Exact McNemar: a two-sided binomial test of the discordant pairs at 1/2."""
    n = improved + regressed
    if n == 0:
        return None
    return float(binomtest(improved, n, 0.5).pvalue)


def verdict_words(improved: int, regressed: int, p: float | None) -> str:
    n = improved + regressed
    if p is None:
        return "no discordant pairs: the two versions gave the same decided result on every pair"
    if p < ALPHA:
        direction = "better" if improved > regressed else "worse"
        return (f"exact McNemar p = {p:.3g} on {n} discordant pairs ({improved} improved,"
                f" {regressed} regressed): the current version is {direction}, distinguishable"
                f" from noise at this size")
    return (f"exact McNemar p = {p:.3g} on {n} discordant pairs ({improved} improved,"
            f" {regressed} regressed): not distinguishable from noise at this size")


def compare_runs(baseline: RunRecord, current: RunRecord) -> Comparison:
    pairs = pair_results(baseline.cases, current.cases)
    counts = Counter(p.outcome for p in pairs)
    full = {k: counts.get(k, 0) for k in ("improved", "regressed", "unchanged", "uncertain")}
    p = mcnemar(full["improved"], full["regressed"])
    recovered = {"baseline": sum(r.status == "FLAKY" for r in baseline.cases),
                 "current": sum(r.status == "FLAKY" for r in current.cases)}
    return Comparison(baseline_run=baseline.run_id, current_run=current.run_id,
                      plan_fingerprint=current.plan.fingerprint if current.plan else None,
                      pairs=pairs, counts=full, recovered=recovered, p_value=p,
                      verdict=verdict_words(full["improved"], full["regressed"], p))


def render(c: Comparison, baseline_label: str, current_label: str) -> str:
    lines = [f"baseline: {baseline_label}", f"current:  {current_label}", ""]
    for p in c.pairs:
        rep = f" #{p.repetition}" if any(q.repetition > 1 for q in c.pairs) else ""
        why = f"  ({p.why})" if p.why else ""
        lines.append(f"  {p.outcome:<10} {p.baseline:<9} → {p.current:<9} {p.id}{rep}{why}")
    n = c.counts
    lines += ["", f"{n['improved']} improved · {n['regressed']} regressed · {n['unchanged']}"
                  f" unchanged · {n['uncertain']} uncertain · recovered on retry:"
                  f" {c.recovered['baseline']} baseline, {c.recovered['current']} current",
              c.verdict]
    return "\n".join(lines)
