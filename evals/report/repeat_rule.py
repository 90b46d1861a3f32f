"""The auto repetition rule measured by replay: on a run recorded with K fixed repetitions, what
the rule (evals/record/repetitions.py) would have decided on each case's recorded outcomes, in
repetition order, and how many repetitions it would have run, against the fixed-K verdict.
No model call: the recorded repetitions are the samples the rule would have drawn."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pydantic import ValidationError

from evals.record.repetitions import (
    CONFIDENCE,
    THRESHOLD,
    Decision,
    RepeatRule,
    StopReason,
    fixed_decision,
)
from evals.record.results import counted_status
from evals.record.run import RunRecord


class ReplayError(ValueError):
    """A run the rule cannot be replayed on; the message says why."""


@dataclass(frozen=True)
class CaseReplay:
    id: str
    statuses: tuple[str, ...]  # as recorded, in repetition order
    fixed: Decision  # the verdict of all recorded repetitions
    auto: Decision
    used: int  # repetitions the rule would have run
    reason: StopReason

    @property
    def agree(self) -> bool:
        return self.fixed == self.auto


@dataclass(frozen=True)
class Replay:
    run_id: str | None
    k: int
    rule: RepeatRule
    cases: list[CaseReplay]

    @property
    def fixed_samples(self) -> int:
        return sum(len(c.statuses) for c in self.cases)

    @property
    def auto_samples(self) -> int:
        return sum(c.used for c in self.cases)

    @property
    def agreed(self) -> int:
        return sum(c.agree for c in self.cases)


def replay(record: RunRecord, *, max_repeat: int | None = None, threshold: float = THRESHOLD,
           confidence: float = CONFIDENCE) -> Replay:
    """The rule (auto up to `max_repeat`, default the run's K) on every case of a fixed-K
    run."""
    name = f"run {record.run_id}" if record.run_id else "the run"
    if record.plan is not None and record.plan.repeat_rule is not None:
        raise ReplayError(f"{name} ran {record.plan.repeats}: replaying needs a run with a"
                          " fixed number of repetitions")
    if not record.cases:
        raise ReplayError(f"{name} has no finished case")
    by_case: dict[str, dict[int, str]] = defaultdict(dict)
    for r in record.cases:
        by_case[r.id][r.repetition] = counted_status(r)
    k = record.plan.repeat if record.plan is not None else \
        max(r.repetition for r in record.cases)
    if k < 2:
        raise ReplayError(f"{name} ran one repetition a case: there is nothing to stop early")
    if max_repeat is not None and max_repeat > k:
        raise ReplayError(f"{name} recorded {k} repetitions a case: the rule's MAX can be at"
                          f" most {k}, not {max_repeat}")
    try:
        rule = RepeatRule(max=max_repeat or k, threshold=threshold, confidence=confidence)
    except ValidationError as exc:
        raise ReplayError("; ".join(f"{e['loc'][0]} {e['input']}: {e['msg']}"
                                    for e in exc.errors())) from None
    cases = []
    for cid, reps in by_case.items():
        statuses = tuple(reps[n] for n in sorted(reps))
        stop = rule.replay(statuses[:rule.max])
        cases.append(CaseReplay(cid, statuses, fixed_decision(statuses, rule.threshold),
                                stop.decision, stop.n, stop.reason))
    return Replay(record.run_id, k, rule, cases)


def bounds_lines(rule: RepeatRule) -> list[str]:
    """The rule's stopping bounds, every repetition decided: per n, the passes that stop a
    case as passing and the misses that stop it as missing."""
    lines = [f"stopping bounds of {rule.describe()}:", "  n  passes to stop  misses to stop"]
    for n, above, below in rule.bounds():
        if n == rule.max:
            lines.append(f"  {n:<2} stops at MAX: the fixed verdict")
        else:
            lines.append(f"  {n:<2} {'—' if above is None else above:<15} "
                         f"{'—' if below is None else below}")
    return lines


def render(r: Replay) -> str:
    name = f"run {r.run_id}" if r.run_id else "the run"
    lines = [*bounds_lines(r.rule), "",
             f"replayed on {name}: {len(r.cases)} cases × {r.k} fixed repetitions",
             f"{'case':<32} {'recorded':<{6 * r.k}} {'fixed':<9} {'auto':<9} used  stop"]
    for c in r.cases:
        recorded = " ".join(s[:5].ljust(5) for s in c.statuses)
        lines.append(f"{c.id:<32} {recorded:<{6 * r.k}} {c.fixed:<9} {c.auto:<9}"
                     f" {c.used}/{len(c.statuses)}  {c.reason}"
                     + ("" if c.agree else "  DIFFERS"))
    share = r.auto_samples / r.fixed_samples if r.fixed_samples else 0.0
    lines += ["", f"verdicts agree on {r.agreed} of {len(r.cases)} cases; repetitions"
                  f" {r.auto_samples} of {r.fixed_samples} ({share:.0%})"]
    return "\n".join(lines)
