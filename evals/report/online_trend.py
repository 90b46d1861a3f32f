"""The trend of the online verdicts (evals/report/online.py makes them): per check, per ISO
week over all traffic and per deployed agent within one audience and page (a system prompt is
composed for each), the failure rate over the turns it decided with its 95% Wilson interval.
A group is flagged when its interval and the group before it do not overlap and the rates
differ by more than the run-to-run noise measured on the suite (the spread of that check's
failure rate over stored runs of one plan by one agent); where the suite gives no such figure,
that is said, and the intervals alone decide. A trend reads one harness's verdicts (today's),
and only conversations whose person still consents (evals/api/online.py chooses them). A
flagged group names the turns it failed on, which `from-conversations --turns` makes into
draft cases under its consent and personal-data rules.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence

from evals.record.online import ONLINE_KINDS, OnlineVerdict, TrendRow
from evals.record.run import RunRecord

MOST_SHOWN = 20  # failing turns a trend row names
NOISE_VERDICTS = 10  # a run's decided verdicts of a kind before its rate counts as noise


def wilson(failed: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a proportion (None for no trials), by scipy."""
    if n == 0:
        return None
    # Imported here: scipy.stats takes about a second to import, and only a trend needs it.
    from scipy.stats import binomtest

    ci = binomtest(failed, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def week_of(at: dt.datetime) -> str:
    year, week, _ = at.isocalendar()
    return f"{year}-W{week:02d}"


def suite_noise(runs: Sequence[RunRecord]) -> dict[str, float]:
    """Per check kind, the run-to-run spread of its failure rate (the largest minus the
    smallest) over complete stored runs of one plan by one agent, the widest such spread of
    any plan and agent with two runs or more that each decided the kind at least
    NOISE_VERDICTS times (a run of two verdicts spreads from 0% to 100% by itself, and would
    silence every flag); a kind no such pair of runs measured is absent."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for r in runs:
        if r.status == "complete" and r.plan is not None and r.agent is not None:
            groups[(r.plan.fingerprint, r.agent.fingerprint)].append(r)
    spread: dict[str, float] = {}
    for same in groups.values():
        if len(same) < 2:
            continue
        for kind in ONLINE_KINDS:
            rates = []
            for r in same:
                verdicts = [c for case in r.cases for a in case.attempts[:1] for c in a.checks
                            if c.kind.split(" ")[0] == kind and c.decided and not c.error]
                if len(verdicts) >= NOISE_VERDICTS:
                    rates.append(sum(not c.passed for c in verdicts) / len(verdicts))
            if len(rates) >= 2:
                spread[kind] = max(spread.get(kind, 0.0), max(rates) - min(rates))
    return spread


def _row(kind: str, group: str, label: str, verdicts: list[OnlineVerdict]) -> TrendRow:
    decided = [v for v in verdicts if v.verdict != "undecided"]
    failed = sum(v.verdict == "fail" for v in decided)
    interval = wilson(failed, len(decided))
    return TrendRow(kind=kind, group=group, label=label, decided=len(decided), failed=failed,
                    undecided=len(verdicts) - len(decided),
                    failing=[v.turn_id for v in decided if v.verdict == "fail"][:MOST_SHOWN],
                    rate=failed / len(decided) if decided else None,
                    low=interval[0] if interval else None,
                    high=interval[1] if interval else None)


def _flag(before: TrendRow, now: TrendRow, noise: float | None) -> TrendRow:
    if None in (before.low, before.high, now.low, now.high, before.rate, now.rate):
        return now
    assert before.rate is not None and now.rate is not None
    apart = (now.low or 0) > (before.high or 0) or (now.high or 0) < (before.low or 0)
    moved = abs(now.rate - before.rate)
    if not apart or (noise is not None and moved <= noise):
        return now
    direction = "up" if now.rate > before.rate else "down"
    beyond = (f"beyond the suite's run-to-run noise ({noise:.0%})" if noise is not None else
              "the suite gives no run-to-run noise for this check, so the intervals alone")
    return now.model_copy(update={"flagged": True, "worse": direction == "up", "why": (
        f"failure rate {direction} from {before.rate:.0%} ({before.label}) to {now.rate:.0%}:"
        f" the intervals do not overlap; {beyond}")})


def trend(verdicts: Sequence[OnlineVerdict], noise: dict[str, float],
          by: str = "week") -> list[TrendRow]:
    """Per check, a row per week (`by="week"`) or per agent in the order it was first seen
    (`by="agent"`), each flagged against the one before it."""
    rows: list[TrendRow] = []
    for kind in ONLINE_KINDS:
        mine = sorted((v for v in verdicts if v.kind == kind), key=lambda v: v.turn_at)
        # Per week: all traffic. Per agent: within one audience and page, since a system
        # prompt is composed for each (another audience is no other deployment).
        streams: dict[str, dict[str, list[OnlineVerdict]]] = {}
        for v in mine:
            stream = "" if by == "week" else v.context
            key = week_of(v.turn_at) if by == "week" else v.agent
            streams.setdefault(stream, {}).setdefault(key, []).append(v)
        for stream, groups in streams.items():
            before: TrendRow | None = None
            for key, group in groups.items():
                label = (f"week {key}" if by == "week" else
                         f"{stream}: agent {key[:8]} ({group[0].model}, from"
                         f" {group[0].turn_at:%Y-%m-%d})")
                row = _row(kind, key, label, group)
                if before is not None:
                    row = _flag(before, row, noise.get(kind))
                rows.append(row.model_copy(update={"stream": stream}))
                before = row
    return rows


def flagged_now(rows: Sequence[TrendRow]) -> list[TrendRow]:
    """The rows flagged worse that are their stream's newest group: what a scheduled job
    alarms on (an old flag stays in the table but is no news; a fall is good news)."""
    newest: dict[tuple[str, str], TrendRow] = {}
    for r in rows:
        newest[(r.kind, r.stream)] = r
    return [r for r in newest.values() if r.flagged and r.worse]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_trend(rows: Sequence[TrendRow], noise: dict[str, float]) -> str:
    """The trend for a terminal: per check, a line per group, flags with why."""
    lines = []
    for kind in ONLINE_KINDS:
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        spread = noise.get(kind)
        lines.append(f"{kind} (suite run-to-run noise: "
                     + (f"{spread:.0%})" if spread is not None else "not measured)"))
        for r in mine:
            interval = f"[{_pct(r.low)}, {_pct(r.high)}]" if r.low is not None else ""
            lines.append(f"  {r.label:<44} {r.failed:>4} failed of {r.decided:>4} decided"
                         f" {_pct(r.rate):>5} {interval:<12} {r.undecided} undecided"
                         + ("  FLAGGED" if r.flagged else ""))
            if r.flagged:
                lines.append(f"    {r.why}")
                if r.failing:
                    ids = ",".join(map(str, r.failing))
                    lines.append(f"    failing turns: {ids} (cases of them: python -m evals"
                                 f" from-conversations --turns {ids})")
    return "\n".join(lines) or "no online verdicts yet (python -m evals online)"
