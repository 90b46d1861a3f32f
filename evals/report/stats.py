"""Repetition statistics: per case pass@1 and pass^K, and the run's mean pass rate with a 95%
interval.

pass@1 is the share of a case's repetitions whose first attempt passed; a repetition whose
first attempt failed a check counts against it; one whose first attempt errored, was skipped
or stayed undecided is left out (the rule that decides which pairs a comparison counts).
pass^K says whether every one of the K repetitions passed (K is the case's own count: under
`--repeat auto` or in an unfinished run a case may have fewer than the run's most). The run's pass
rate is the mean of the cases' pass@1, with a Student-t interval over cases: repetitions of one
case are not independent of each other, cases are.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from evals.record.results import CaseResult, first_decided


@dataclass(frozen=True)
class CaseStats:
    id: str
    statuses: tuple[str, ...]  # per repetition, in order
    pass_at_1: float | None  # None: no repetition was decided
    pass_all: bool  # pass^K


@dataclass(frozen=True)
class RunStats:
    cases: list[CaseStats]
    mean: float | None
    low: float | None
    high: float | None
    n_cases: int
    repeat: int


_SHORT = {"PASS": "PASS ", "FLAKY": "FLAKY", "FAIL": "FAIL ", "ERROR": "ERROR",
          "SKIPPED": "SKIP ", "UNDECIDED": "UNDEC"}


def case_stats(results: list[CaseResult]) -> list[CaseStats]:
    by_case: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_case[r.id].append(r)
    out = []
    for cid, reps in by_case.items():
        reps.sort(key=lambda r: r.repetition)
        firsts = [first_decided(r) for r in reps]
        decided = [f for f in firsts if f is not None]
        p1 = sum(decided) / len(decided) if decided else None
        out.append(CaseStats(cid, tuple(r.status for r in reps), p1,
                             all(r.status == "PASS" for r in reps)))
    return out


def run_stats(results: list[CaseResult]) -> RunStats:
    cases = case_stats(results)
    values = [c.pass_at_1 for c in cases if c.pass_at_1 is not None]
    repeat = max((r.repetition for r in results), default=1)
    if not values:
        return RunStats(cases, None, None, None, 0, repeat)
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return RunStats(cases, mean, None, None, n, repeat)
    from scipy import stats as st  # 1.0 s to import (-X importtime): only for an interval

    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(st.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return RunStats(cases, mean, max(0.0, mean - half), min(1.0, mean + half), n, repeat)


def stats_lines(results: list[CaseResult]) -> list[str]:
    """The report's repetition block (only with more than one repetition; a run of one
    repetition computes nothing, and imports no scipy)."""
    if max((r.repetition for r in results), default=1) < 2:
        return []
    s = run_stats(results)
    lines = [f"per case over {s.repeat} repetitions:"]
    for c in s.cases:
        p1 = "—" if c.pass_at_1 is None else f"{c.pass_at_1:.2f}"
        lines.append(f"  {' '.join(_SHORT.get(st_, st_) for st_ in c.statuses):<{6 * s.repeat}}"
                     f" pass@1 {p1:<5} {f'pass^{len(c.statuses)}':<{len(str(s.repeat)) + 5}}"
                     f" {'yes' if c.pass_all else 'no ':<3}"
                     f" {c.id}")
    if s.mean is not None:
        interval = (f", 95% interval {s.low:.2f}–{s.high:.2f}" if s.low is not None
                    else " (one decided case: no interval)")
        lines.append(f"mean pass rate {s.mean:.2f}{interval} over {s.n_cases} cases")
    return lines
