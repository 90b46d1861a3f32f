"""Pairing two runs of one plan: improved, regressed, unchanged, uncertain; and an exact
McNemar test on the discordant pairs.

An item is a case, or a scenario in one visitor style (`glowforge-under-pressure@calm`). Only
matched first attempts that both completed and were decided are compared: a first attempt that
errored, a skipped item, or an undecided judged check makes the pair uncertain, and an item
is uncertain when its open first attempts, read as passes or as fails, could change its
outcome (PASS FAIL before, PASS UNDECIDED now is not an improvement). Retries never decide a
pair; an item that recovered on its retry (FLAKY) is counted apart.

Pairs are listed per item and repetition (`… #2`), for reading; the item is the unit of the
counts and of McNemar's test, its repetitions folded into the share of its first attempts
that passed on each side. McNemar needs independent pairs, and repetitions are not: they share
the item (its prompt or visitor, its fixtures, how hard it is), so K of them would count one
item's difference K times and shrink p. Nor is repetition r of one version matched to
repetition r of the other: they are separate samples, and pairing them by index would let the
order they finished in change the count (a baseline's PASS FAIL against FAIL PASS is two
discordant pairs, against PASS FAIL none).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from evals.record.comparison import OUTCOMES, Comparison, Outcome, Pair
from evals.record.results import CaseResult, first_counted, first_decided
from evals.record.run import RunRecord
from evals.report import attribution
from evals.report.spend import render_spend, spend_of

ALPHA = 0.05


def _why(result: CaseResult) -> str:
    if result.status == "SKIPPED":
        return "skipped"
    first = result.attempts[0] if result.attempts else None
    if first is None or first.broke:
        return "errored"
    return "undecided judge"


def _outcome(base: float | None, cur: float | None) -> Outcome:
    if base is None or cur is None:
        return "uncertain"
    return "unchanged" if base == cur else ("improved" if cur > base else "regressed")


def pair_results(baseline: list[CaseResult], current: list[CaseResult]) -> list[Pair]:
    """One pair per item and repetition, for reading; counts and the test use `per_case`."""
    base = {(r.id, r.repetition): r for r in baseline}
    cur = {(r.id, r.repetition): r for r in current}
    pairs = []
    for key in [*cur, *[k for k in base if k not in cur]]:
        b, c = base.get(key), cur.get(key)
        ref = c or b
        assert ref is not None
        if b is None or c is None:
            pairs.append(Pair(id=ref.id, file=ref.file, repetition=ref.repetition,
                              baseline=b.status if b else "—", current=c.status if c else "—",
                              outcome="uncertain",
                              why="no baseline result" if b is None else "no current result"))
            continue
        bp, cp = first_decided(b), first_decided(c)
        why = "; ".join(f"{side} {_why(r)}" for side, r, p in
                        (("baseline", b, bp), ("current", c, cp)) if p is None)
        pairs.append(Pair(id=c.id, file=c.file, repetition=c.repetition, baseline=b.status,
                          current=c.status, outcome=_outcome(bp, cp), why=why))
    return pairs


def per_case(pairs: list[Pair], baseline: list[CaseResult], current: list[CaseResult]
             ) -> dict[str, Outcome]:
    """Each item's outcome (a case's, or a scenario's in one visitor style) from its
    repetitions' decided first attempts: the share that passed on each side (repetitions of
    one item are not independent, so the item is the unit; see the module's docstring)."""
    def rates(results: list[CaseResult], undecided: bool | None
              ) -> dict[str, float | None]:
        """The share of decided first attempts that passed; `undecided` True or False reads a
        first attempt an untrusted judge left open as that verdict (None: left out)."""
        by: dict[str, list[bool]] = {}
        seen: set[str] = set()
        for r in results:
            seen.add(r.id)
            d = first_decided(r)
            if d is None and undecided is not None and _open_first(r):
                d = undecided
            if d is not None:
                by.setdefault(r.id, []).append(d)
        return {cid: (sum(by[cid]) / len(by[cid]) if cid in by else None) for cid in seen}

    # Each side read three ways: its open first attempts left out, read as passes, as fails.
    b = {x: rates(baseline, x) for x in (None, True, False)}
    c = {x: rates(current, x) for x in (None, True, False)}
    # An item whose outcome an open judge could change is uncertain: every reading of the two
    # sides must give the outcome they give with the open ones left out.
    out: dict[str, Outcome] = {}
    for cid in dict.fromkeys([p.id for p in pairs]):
        outcome = _outcome(b[None].get(cid), c[None].get(cid))
        if any(_outcome(b[x].get(cid), c[y].get(cid)) != outcome
               for x in (True, False) for y in (True, False)):
            outcome = "uncertain"
        out[cid] = outcome
    return out


def _open_first(result: CaseResult) -> bool:
    """Its first counted attempt waits on a judge nobody trusts (every decided check passed)."""
    first = first_counted(result)
    return result.status != "SKIPPED" and first is not None and first.undecided


def mcnemar(improved: int, regressed: int) -> float | None:
    """Exact McNemar: a two-sided binomial test of the discordant pairs at 1/2."""
    # Imported here: scipy.stats takes 1.0 s to import (python -X importtime), and only a
    # comparison needs it.
    from scipy.stats import binomtest

    n = improved + regressed
    if n == 0:
        return None
    return float(binomtest(improved, n, 0.5).pvalue)


def verdict_words(improved: int, regressed: int, p: float | None,
                  unchanged: int | None = None) -> str:
    n = improved + regressed
    if p is None and unchanged == 0:
        return "no discordant pairs, and no item decided on both sides: nothing to compare"
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
    cases = per_case(pairs, baseline.cases, current.cases)
    counts = Counter(cases.values())
    full: dict[str, int] = {k: counts.get(k, 0) for k in OUTCOMES}
    p = mcnemar(full["improved"], full["regressed"])
    recovered: dict[Literal["baseline", "current"], int] = {
        "baseline": sum(r.status == "FLAKY" for r in baseline.cases),
        "current": sum(r.status == "FLAKY" for r in current.cases)}
    return Comparison(baseline_run=baseline.run_id, current_run=current.run_id,
                      plan_fingerprint=current.plan.fingerprint if current.plan else None,
                      pairs=pairs, cases=cases, counts=full, recovered=recovered, p_value=p,
                      verdict=verdict_words(full["improved"], full["regressed"], p,
                                            full["unchanged"]),
                      attribution=attribution.attribute(baseline, current, cases,
                                                        unsettled(pairs, cases)),
                      spend=spend_of(baseline.cases, current.cases))


def unsettled(pairs: list[Pair], cases: dict[str, Outcome]) -> list[str]:
    """Uncertain items whose status changed in some repetition (UNDECIDED → FAIL, say): the
    comparison cannot count them, but the change that moved them is worth reading."""
    return list(dict.fromkeys(
        p.id for p in pairs if cases.get(p.id) == "uncertain" and p.baseline != p.current
        and "—" not in (p.baseline, p.current)))


def by_item(c: Comparison) -> list[tuple[str, Outcome, list[Pair]]]:
    """Each item with its outcome (the item is the unit: its repetitions are folded) and its
    repetitions' pairs, in the pairs' order. A repetition's statuses are read, never labelled
    improved or regressed on their own: the two sides' repetitions are separate samples."""
    items: dict[str, list[Pair]] = {}
    for p in c.pairs:
        items.setdefault(p.id, []).append(p)
    return [(cid, c.cases.get(cid, "uncertain"), ps) for cid, ps in items.items()]


def statuses(pairs: list[Pair]) -> tuple[str, str]:
    """An item's statuses on each side, repetition by repetition ("PASS FAIL")."""
    return " ".join(p.baseline for p in pairs), " ".join(p.current for p in pairs)


def reasons(pairs: list[Pair]) -> str:
    """Why an item's pairs are uncertain, each with its repetition when it has several ("#2
    the judge is not trusted"); empty when none says."""
    return "; ".join(f"#{p.repetition} {p.why}" if len(pairs) > 1 else p.why
                     for p in pairs if p.why)


def render(c: Comparison, baseline_label: str, current_label: str) -> str:
    lines = [f"baseline: {baseline_label}", f"current:  {current_label}", ""]
    for cid, outcome, ps in by_item(c):
        before, now = statuses(ps)
        why = f"  ({whys})" if (whys := reasons(ps)) else ""
        lines.append(f"  {outcome:<10} {before:<9} → {now:<9} {cid}{why}")
    n = c.counts
    k = max((p.repetition for p in c.pairs), default=1)
    unit = f"items (each once, over its {k} repetitions)" if k > 1 else "items"
    lines += ["", f"{unit}: {n['improved']} improved · {n['regressed']} regressed ·"
                  f" {n['unchanged']} unchanged · {n['uncertain']} uncertain · recovered on retry:"
                  f" {c.recovered['baseline']} baseline, {c.recovered['current']} current",
              c.verdict]
    if c.spend is not None:
        lines += render_spend(c.spend)
    return "\n".join(lines + attribution.render(c.attribution))
