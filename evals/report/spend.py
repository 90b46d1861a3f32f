"""What two versions' attempts took: p50 and p95 latency and the cost per item on each side,
and the gate's limits on their increase (`--max-cost-increase`, `--max-p95-increase`).

Latency is per attempt (one answer), over the attempts that measured it: an attempt with a
replayed model call took no model time, so it is left out and counted apart. Cost is what the
chat model's calls cost, made or replayed, per item (item × repetition, retries included);
one attempt without a price makes the side's cost unknown, never 0. A limit that cannot be
checked (an unknown figure on either side) fails the gate, saying why: a limit asked for and
not checked is not met.
"""

from __future__ import annotations

import math

from evals.checks.spend import attempt_cost
from evals.record.comparison import SideSpend, Spend
from evals.record.results import NOT_CALLED, Attempt, CaseResult


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile (q in 0..1): a value that occurred, None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def ran(a: Attempt) -> bool:
    """An attempt the model answered and the harness finished (not lost to the provider, not
    refused by the guard, not broken: a harness error's attempt has no latency or cost
    measured, and would read as 0 s and no price)."""
    return not a.lost_to_provider and a.failure not in NOT_CALLED and a.error is None


def side_spend(results: list[CaseResult]) -> SideSpend:
    attempts = [a for r in results for a in r.attempts if ran(a)]
    timed = [a.latency_ms / 1000 for a in attempts if not a.calls.replayed]
    costs = [attempt_cost(a) for a in attempts]
    known = [c for c in costs if c is not None]
    items = sum(1 for r in results if any(ran(a) for a in r.attempts))
    unpriced = len(costs) - len(known)
    return SideSpend(items=items, attempts=len(attempts), timed=len(timed),
                     p50_s=percentile(timed, 0.5), p95_s=percentile(timed, 0.95),
                     cost_per_item_usd=sum(known) / items if items and not unpriced else None,
                     unpriced=unpriced)


def spend_of(baseline: list[CaseResult], current: list[CaseResult]) -> Spend:
    return Spend(baseline=side_spend(baseline), current=side_spend(current))


def increase(before: float, after: float) -> float:
    """The relative increase in percent (+inf from nothing to something)."""
    if before == 0:
        return 0.0 if after == 0 else math.inf
    return (after / before - 1) * 100


def _pct(value: float) -> str:
    return "from 0" if math.isinf(value) else f"{value:+.0f}%"


def _unknown(side: SideSpend, what: str) -> str:
    if what == "cost":
        return f"{side.unpriced} attempt(s) without a price" if side.unpriced else \
            "no item the model answered"
    return "no attempt measured it (every one replayed a model call)" if side.attempts \
        else "no attempt"


def _figures(s: Spend, what: str) -> tuple[float | None, float | None]:
    if what == "cost":
        return s.baseline.cost_per_item_usd, s.current.cost_per_item_usd
    return s.baseline.p95_s, s.current.p95_s


def limit_reasons(s: Spend, max_cost_increase: float | None,
                  max_p95_increase: float | None) -> list[str]:
    """Why the gate fails on spend: each limit exceeded, with its figures, or not checkable."""
    reasons = []
    for what, name, unit, limit in (("cost", "cost per item", "USD", max_cost_increase),
                                    ("p95", "p95 latency", "s", max_p95_increase)):
        if limit is None:
            continue
        before, after = _figures(s, what)
        if before is None or after is None:
            sides = [f"{label} {_unknown(side, what)}" for label, side, v in
                     (("baseline", s.baseline, before), ("current", s.current, after))
                     if v is None]
            reasons.append(f"{name} cannot be checked against the limit +{limit:g}%: unknown"
                           f" ({'; '.join(sides)})")
            continue
        up = increase(before, after)
        if up > limit:
            reasons.append(f"{name} {_pct(up)} ({before:.4g} → {after:.4g} {unit}),"
                           f" limit +{limit:g}%")
    return reasons


def render_spend(s: Spend) -> list[str]:
    """The spend lines of compare and the gate."""
    b, c = s.baseline, s.current

    def seconds(v: float | None) -> str:
        return "?" if v is None else f"{v:.2f} s"

    def change(before: float | None, after: float | None) -> str:
        return "" if before is None or after is None else f" ({_pct(increase(before, after))})"

    def cost(side: SideSpend) -> str:
        if side.cost_per_item_usd is None:
            return f"unknown ({_unknown(side, 'cost')})"
        return f"{side.cost_per_item_usd:.4g} USD"

    timed = "" if b.timed == b.attempts and c.timed == c.attempts else \
        (f" (timed: {b.timed} of {b.attempts} baseline, {c.timed} of {c.attempts} current"
         " attempts; the others replayed a call)")
    return [f"latency per attempt: p50 {seconds(b.p50_s)} → {seconds(c.p50_s)}"
            f"{change(b.p50_s, c.p50_s)} · p95 {seconds(b.p95_s)} → {seconds(c.p95_s)}"
            f"{change(b.p95_s, c.p95_s)}{timed}",
            f"cost per item: {cost(b)} → {cost(c)}"
            f"{change(b.cost_per_item_usd, c.cost_per_item_usd)}"]
