"""What an attempt may take: its latency and its cost, against an item's limits
(`max_latency_s`, `max_cost` in USD; evals/load/limits.py).

Both are measured checks: they read the finished attempt, and a figure the attempt does not
know makes the check undecided, never a pass. A cost is unknown when the chat model has no
price. The cost counts the chat model's calls, those made and those replayed (at what each cost
when it was made, kept with its cache entry; an entry kept before costs were, at today's
price); the latency is the whole attempt's, every turn of a scenario's
conversation included. A replay takes no time, so a replayed call (the chat model's or a
visitor's; a judge's is outside the latency) adds the latency recorded when it was made: the
limit decides as it would have on the original. A latency is unknown only when such a call has
none recorded (its cache entry was kept before latencies were, or the record predates them).
"""

from __future__ import annotations

from pydantic import Field

from evals.checks._registry import Args, Measured, measured
from evals.record.results import Attempt


class MaxLatency(Args):
    limit_s: float = Field(gt=0)


class MaxCost(Args):
    limit_usd: float = Field(gt=0)


def attempt_cost(attempt: Attempt) -> float | None:
    """What the attempt's chat-model calls cost, made or replayed; None when unknown."""
    calls = attempt.calls
    if attempt.cost_usd is None or (calls.replayed and calls.replayed_cost_usd is None):
        return None
    return attempt.cost_usd + (calls.replayed_cost_usd or 0.0)


@measured("max_latency", args=MaxLatency, label=lambda a: f"max_latency {a.limit_s:g} s",
          needs=frozenset({"latency"}))
def max_latency(attempt: Attempt, args: MaxLatency) -> Measured:
    calls = attempt.calls
    if calls.replayed and calls.replayed_latency_ms is None:
        return None, (f"latency unknown: {calls.replayed} model call(s) replayed from the call"
                      f" cache, not all with the latency they took when made"
                      f" ({attempt.latency_ms / 1000:.2f} s is not the model's); limit"
                      f" {args.limit_s:g} s not checked (--cache refresh measures it)")
    replayed_ms = calls.replayed_latency_ms or 0
    seconds = (attempt.latency_ms + replayed_ms) / 1000
    figure = f"latency {seconds:.2f} s"
    if calls.replayed_timed:
        n = calls.replayed_timed
        figure += (f" ({n} replayed call{'s' if n != 1 else ''} at {'their' if n != 1 else 'its'}"
                   f" recorded {replayed_ms / 1000:.2f} s)")
    if seconds > args.limit_s:
        return False, f"{figure}, over the limit of {args.limit_s:g} s"
    return True, f"{figure}, limit {args.limit_s:g} s"


@measured("max_cost", args=MaxCost, label=lambda a: f"max_cost {a.limit_usd:g} USD",
          needs=frozenset({"price"}))
def max_cost(attempt: Attempt, args: MaxCost) -> Measured:
    cost = attempt_cost(attempt)
    if cost is None:
        return None, (f"cost unknown: the chat model has no price; limit {args.limit_usd:g}"
                      " USD not checked")
    if cost > args.limit_usd:
        return False, f"cost {cost:.6g} USD, over the limit of {args.limit_usd:g} USD"
    return True, f"cost {cost:.6g} USD, limit {args.limit_usd:g} USD"
