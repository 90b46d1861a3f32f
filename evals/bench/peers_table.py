"""The table of `make bench-peers` (evals/bench/peers.py): what a run of a tool says of its
items, each row's rounds as median and range of the rounds whose items all passed, the issue's
targets beside this suite's rows, and whether this suite is ahead of both peers on every
column.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from evals.bench.processes import LEFT_WAIT_S, Timed

SUITE, PROMPTFOO, INSPECT = "this suite", "promptfoo", "inspect_ai"
EXPECTED = "Form 4"  # what the fake model's answer names, and every item checks for
CONTAINS_ALL = f"contains_all {EXPECTED}"
# The targets for this suite: one case in endpoint mode, and N=200 at C=50.
WALL_TARGET_S, CPU_TARGET_S, TARGET_N, TARGET_C = 1.2, 1.1, 200, 50


@dataclass(frozen=True)
class Outcome:
    """What a run's own record says: items passed of those expected, and what went wrong
    (an exit code, a missing record, items not run), if anything."""

    passed: int
    expected: int
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None and self.passed == self.expected

    def __str__(self) -> str:
        text = f"{self.passed}/{self.expected} passed"
        return text if self.problem is None else f"{text}, {self.problem}"


@dataclass(frozen=True)
class Measured:
    """One run of a row: its figures and what its own record says of its items."""

    timed: Timed
    outcome: Outcome


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float

    def show(self, digits: int) -> str:
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}–{self.high:.{digits}f})"


def spread(values: Sequence[float]) -> Spread | None:
    """Median and range, None for no value."""
    return Spread(statistics.median(values), min(values), max(values)) if values else None


@dataclass
class Row:
    """A job's runs, round after round."""

    tool: str
    check: str
    n: int
    runs: list[Measured]
    concurrency: int = TARGET_C

    @property
    def good(self) -> list[Measured]:
        """The runs whose items all passed: the only ones timed."""
        return [r for r in self.runs if r.outcome.ok]

    def figure(self, name: str) -> Spread | None:
        return spread([getattr(r.timed, name) for r in self.good])

    def items(self) -> str:
        bad = [(i, r) for i, r in enumerate(self.runs, 1) if not r.outcome.ok]
        if not bad:
            return f"all {self.n} passed, {len(self.runs)} of {len(self.runs)} rounds"
        return "; ".join(f"round {i} FAILED: {r.outcome}" for i, r in bad)


def target(row: Row) -> str:
    """The issue's target for this row, met or unmet at the median of the good rounds (unmet
    when a round's items did not all pass), or nothing when it has none."""
    if row.tool != SUITE or row.check != CONTAINS_ALL:
        return ""
    if row.n == 1:
        name, limit, what = "wall_s", WALL_TARGET_S, "wall"
    elif (row.n, row.concurrency) == (TARGET_N, TARGET_C):
        name, limit, what = "cpu_s", CPU_TARGET_S, "CPU"
    else:
        return ""
    figure = row.figure(name)
    met = figure is not None and len(row.good) == len(row.runs) and figure.median <= limit
    return f"{what} ≤ {limit} s: {'met' if met else 'unmet'}"


COLUMNS = (("wall_s", "wall s", 2), ("cpu_s", "CPU s", 2), ("rss_mib", "peak RSS MiB", 0))


def table(rows: Sequence[Row]) -> list[str]:
    """One line per row: median (range) of each figure over its good rounds, its items, and
    its target if it has one."""
    head = ["tool", "check", "N", *(title for _, title, _ in COLUMNS), "items", "target"]
    body = [[r.tool, r.check, str(r.n),
             *((f.show(digits) if (f := r.figure(name)) else "—") for name, _, digits in COLUMNS),
             r.items(), target(r)] for r in rows]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
            for line in [head, *body]]


def ahead(rows: Sequence[Row]) -> list[str]:
    """For each N and figure, whether this suite's median is below both peers' (the issue's
    "ahead on every column"), on the rows of the same literal check."""
    lines = []
    ns = sorted({r.n for r in rows})
    for n in ns:
        ours = next((r for r in rows if r.tool == SUITE and r.check == CONTAINS_ALL
                     and r.n == n), None)
        peers = [r for r in rows if r.tool != SUITE and r.n == n]
        if ours is None or not peers:
            continue
        for name, title, digits in COLUMNS:
            mine = ours.figure(name)
            theirs = [(p.tool, p.figure(name)) for p in peers]
            shown = ", ".join(f"{tool} {f.median:.{digits}f}" if f else f"{tool} —"
                              for tool, f in theirs)
            if mine is None or any(f is None for _, f in theirs):
                verdict = "not measured (a row has no run whose items all passed)"
            else:
                behind = [tool for tool, f in theirs if f is not None and f.median <= mine.median]
                verdict = "ahead" if not behind else f"behind {', '.join(behind)}"
            mine_text = f"{mine.median:.{digits}f}" if mine else "—"
            lines.append(f"N={n:<4} {title:<13} this suite {mine_text} vs {shown}: {verdict}")
    return lines


def notes(rows: Sequence[Row]) -> list[str]:
    """What runs left running: their CPU (counted), and any not reaped (not counted); a row of
    this suite that left no database server behind used one it did not start."""
    out = []
    for r in rows:
        left = spread([m.timed.left_cpu_s for m in r.good])
        if r.tool == SUITE and r.good and not any(m.timed.left for m in r.good):
            out.append(f"{r.tool} {r.check} N={r.n}: left nothing running: its database"
                       " server was running before it (or DATABASE_URL names one), and that"
                       " server's CPU is not in its figures")
        if left and left.high > 0:
            names = sorted({name for m in r.good for name in m.timed.left})
            out.append(f"{r.tool} {r.check} N={r.n}: of its CPU, processes it left running"
                       f" ({', '.join(names)}; reaped after it exited) {left.show(2)} s")
        still = max((m.timed.still_running for m in r.runs), default=0)
        if still:
            out.append(f"{r.tool} {r.check} N={r.n}: {still} process(es) it left still ran"
                       f" {LEFT_WAIT_S:.0f} s after it exited: their CPU is not counted")
    return out
