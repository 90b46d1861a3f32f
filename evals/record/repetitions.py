"""`--repeat auto[:MAX]`: a case gets another repetition only while its verdict is open.

The verdict of a case is whether its pass rate is at least THRESHOLD. A repetition is a pass
(PASS) or a miss (FAIL, FLAKY: a miss as the gate counts it); an ERROR counts as neither and
the case goes on; an UNDECIDED or SKIPPED repetition stops the case (another sample cannot make
an untrusted judge trusted, nor run an item that was skipped). After each repetition, with s
passes of d decided repetitions and n repetitions in all, the case stops when

- n is MAX;
- the exact (Clopper–Pearson) interval of s/d at CONFIDENCE lies wholly at or above THRESHOLD
  (it passes) or wholly below it (it misses);
- or no outcome of the MAX − n repetitions left can change the fixed-MAX verdict (s/d ≥ τ
  over the decided repetitions): it is settled.

Stopped otherwise (at MAX, or by an undecided or skipped repetition), the verdict is the
fixed-MAX one on the decided repetitions so far; with none, the case is undecided. Replayed
on MAX recorded repetitions, the last rule alone gives the fixed-MAX verdict on every sequence
of passes and misses; the interval can stop a case earlier only when MAX is above the
interval's floor (ceil(ln(α/2) / ln τ) repetitions for a unanimous case). The error rates
(`operating`) are exact sums over the binomial, not simulations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

THRESHOLD = 0.5  # a case passes when it passes at least as often as it misses
CONFIDENCE = 0.9  # two-sided: each bound is a one-sided 95% bound
DEFAULT_MAX = 5

Decision = Literal["passes", "misses", "undecided"]
Outcome = Literal["pass", "miss", "none", "stop"]
StopReason = Literal["above", "below", "settled", "max", "undecided", "skipped"]

_OUTCOMES: dict[str, Outcome] = {"PASS": "pass", "FAIL": "miss", "FLAKY": "miss",
                                 "ERROR": "none", "UNDECIDED": "stop", "SKIPPED": "stop"}


def outcome(status: str) -> Outcome:
    """What one repetition's status counts as under the rule."""
    try:
        return _OUTCOMES[status]
    except KeyError:
        raise ValueError(f"not a case status: {status!r}") from None


@dataclass(frozen=True)
class Stop:
    """Where a case stopped: after n repetitions, why, and its verdict."""

    n: int
    reason: StopReason
    decision: Decision


def fixed_decision(statuses: Sequence[str], threshold: float = THRESHOLD) -> Decision:
    """The verdict of a fixed number of repetitions: pass rate of the decided ones ≥ τ."""
    s = sum(outcome(x) == "pass" for x in statuses)
    d = s + sum(outcome(x) == "miss" for x in statuses)
    if d == 0:
        return "undecided"
    return "passes" if s >= exact(threshold) * d else "misses"


def exact(threshold: float) -> Fraction:
    """τ as the decimal it was written as (0.28 is 7/25): a pass rate exactly at τ reaches
    it, where 0.28 * 25 in floating point is 7.000000000000001."""
    return Fraction(str(threshold))


class RepeatRule(BaseModel):
    """The stopping rule of `--repeat auto[:MAX]`, recorded in the plan with its parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max: int = Field(default=DEFAULT_MAX, ge=2, le=100)
    threshold: float = Field(default=THRESHOLD, gt=0, lt=1)
    confidence: float = Field(default=CONFIDENCE, gt=0, lt=1)

    def describe(self) -> str:
        return (f"auto up to {self.max} (pass rate ≥ {self.threshold:g}, exact"
                f" {self.confidence:.0%} interval)")

    def stop_after(self, statuses: Sequence[str]) -> Stop | None:
        """Where the case stops after these repetitions (in order), or None: another one."""
        n = len(statuses)
        if n == 0:
            return None
        last = outcome(statuses[-1])
        if last == "stop":
            return Stop(n, "undecided" if statuses[-1] == "UNDECIDED" else "skipped",
                        fixed_decision(statuses, self.threshold))
        s = sum(outcome(x) == "pass" for x in statuses)
        d = s + sum(outcome(x) == "miss" for x in statuses)
        if n >= self.max:
            return Stop(n, "max", fixed_decision(statuses, self.threshold))
        if d:
            low, high = exact_interval(s, d, self.confidence)
            if low >= self.threshold:
                return Stop(n, "above", "passes")
            if high < self.threshold:
                return Stop(n, "below", "misses")
        left = self.max - n
        tau = exact(self.threshold)
        if s >= tau * (d + left):  # passes even if every one left misses
            return Stop(n, "settled", "passes")
        if s + left < tau * (d + left):  # misses even if every one left passes
            return Stop(n, "settled", "misses")
        return None

    def replay(self, statuses: Sequence[str]) -> Stop:
        """Where the rule stops on a recorded sequence; one too short to reach a stop ends
        at its last repetition with the fixed verdict of what it holds."""
        for n in range(1, len(statuses) + 1):
            stop = self.stop_after(statuses[:n])
            if stop is not None:
                return stop
        return Stop(len(statuses), "max", fixed_decision(statuses, self.threshold))

    def bounds(self) -> list[tuple[int, int | None, int | None]]:
        """Per n (every repetition decided): the fewest passes that stop the case as passing
        and the fewest misses that stop it as missing (None: none stops it at n)."""
        out = []
        for n in range(1, self.max + 1):
            above = next((s for s in range(n + 1) if self._stops(n, s) == "passes"), None)
            below = next((f for f in range(n + 1) if self._stops(n, n - f) == "misses"), None)
            out.append((n, above, below))
        return out

    def _stops(self, n: int, s: int) -> Decision | None:
        stop = self.stop_after(["PASS"] * s + ["FAIL"] * (n - s))
        return stop.decision if stop is not None and stop.reason != "max" else None

    def operating(self, p: float, against: int | None = None) -> Operating:
        """Exact, for a case whose repetitions pass independently with probability p (all
        decided): the chance the rule's verdict is "passes", its expected repetitions, and
        the chance it differs from the fixed verdict of `against` (≥ MAX, default MAX)
        repetitions of the same sequence."""
        k = against or self.max
        if k < self.max:
            raise ValueError(f"a fixed {k} repetitions cannot extend a rule of MAX {self.max}")
        passes = samples = disagree = 0.0
        mass = {0: 1.0}  # passes so far -> probability of being here, not yet stopped
        for n in range(1, self.max + 1):
            nxt: dict[int, float] = {}
            for s, m in mass.items():
                for s2, q in ((s + 1, p), (s, 1 - p)):
                    if q:
                        nxt[s2] = nxt.get(s2, 0.0) + m * q
            mass = {}
            for s, m in nxt.items():
                stop = self.stop_after(["PASS"] * s + ["FAIL"] * (n - s))
                if stop is None:
                    mass[s] = m
                    continue
                samples += m * n
                fixed_passes = _tail(k - n, p, math.ceil(exact(self.threshold) * k) - s)
                if stop.decision == "passes":
                    passes += m
                    disagree += m * (1 - fixed_passes)
                else:
                    disagree += m * fixed_passes
        return Operating(p, passes, samples, disagree)


@dataclass(frozen=True)
class Operating:
    p: float
    passes: float  # P(the verdict is "passes")
    samples: float  # expected repetitions
    disagree: float  # P(the verdict differs from the fixed-MAX one)


def _tail(n: int, p: float, k: int) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


@lru_cache(maxsize=4096)
def exact_interval(s: int, n: int, confidence: float) -> tuple[float, float]:
    """The two-sided Clopper–Pearson interval of s successes in n trials (scipy's
    binomtest(s, n).proportion_ci(confidence, "exact")), by bisection on the binomial tails:
    no scipy import for the runner."""
    if not 0 <= s <= n or n == 0:
        raise ValueError(f"no interval for {s} of {n}")
    half = (1 - confidence) / 2
    low = 0.0 if s == 0 else _solve(lambda p: _tail(n, p, s) - half)
    high = 1.0 if s == n else _solve(lambda p: half - (1 - _tail(n, p, s + 1)))
    return low, high


def _solve(f: Callable[[float], float]) -> float:
    """The root in (0, 1) of an increasing function."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def parse_repeat(text: str | int) -> int | RepeatRule:
    """`--repeat` / EVAL_REPEAT: K fixed repetitions, or `auto[:MAX]` (ValueError else)."""
    if isinstance(text, int):
        value: int | str = text
    else:
        value = text.strip().lower()
    if isinstance(value, str) and value.startswith("auto"):
        rest = value[4:]
        if rest and not rest.startswith(":"):
            raise ValueError(f"not K or auto[:MAX]: {text!r}")
        top = _whole(rest[1:], text) if rest else DEFAULT_MAX
        if not 2 <= top <= 100:
            raise ValueError(f"auto:MAX takes a MAX from 2 to 100, not {top}")
        return RepeatRule(max=top)
    k = value if isinstance(value, int) else _whole(value, text)
    if not 1 <= k <= 100:
        raise ValueError(f"repetitions go from 1 to 100, not {k}")
    return k


def _whole(part: str, text: str | int) -> int:
    try:
        return int(part)
    except ValueError:
        raise ValueError(f"not K or auto[:MAX]: {text!r}") from None

