"""The gate before a model switch or a prompt change, as a program (seed 001's policy), with
three outcomes: PASS, FAIL (the assistant missed, decided) and UNDECIDED (the policy cannot be
decided because items are undecided: a judged one with no trusted judge, or a structural check
that could not read its answer and no trusted judge settled it).

Two runs (one run with two repetitions). Cases and scenario conversations are held to it alike,
file by file. The hard files (honest-absence and manual-grounding unless told otherwise) allow
no miss in either run; every other file allows one miss per run. A miss is any status but PASS
and UNDECIDED: FAIL, FLAKY, ERROR, SKIPPED, and an UNDECIDED item whose first attempt failed
a check or broke (its retry waits on a judge, but a pass would make it FLAKY: a miss either way;
`certain_miss`). An item missed in both runs is structural (whether
for the same reason or a different one), and fails the gate whatever the count. Against a
comparison point, the regressions are listed with the McNemar line, and a regression
distinguishable from noise fails the gate.

An UNDECIDED item (no decided check failed, but one could not decide: a judge that has not
earned its verdicts, a sentence a structural check could not place, an answer in a language it
does not read, an attack that never arrived) is neither a miss nor a pass: where counting it as
a miss would break the policy and counting it
as a pass would not (a file's allowance, or an item missed or undecided in every run), the
gate is UNDECIDED, names those items and says how to get a trusted
judge. A decided breach is a FAIL whatever the undecided items would say. A rise in cost per
item or p95 latency past its limit, or one that cannot be checked, fails it too
(evals/report/spend.py). The verdict line says how many of its samples the call cache replayed
(wholly, and apart those partly), or that the run had the cache off.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evals.record.comparison import Comparison
from evals.record.results import CaseResult, counted_status
from evals.report.compare import ALPHA, by_item, statuses
from evals.report.spend import limit_reasons, render_spend
from evals.settings import Policy

HARD_FILES = ("honest-absence", "manual-grounding")
MISSES_ALLOWED = 1
# The exit of a gate that could not be decided: neither 0 (pass) nor 1 (fail).
UNDECIDED_EXIT = 3
TRUSTED_JUDGE_HINT = (
    "calibrate the judge (python -m evals calibrate --set makerspace --judge-model ID --save,"
    " or from people's labels: see docs/judge.md), or run with a judge that has a trust record"
    " (--judge-model ID / EVAL_JUDGE_MODEL); a check's undecided sentence is settled"
    " by a judge trusted for its question (python -m evals calibrate --questions --save)")

Outcome = Literal["PASS", "FAIL", "UNDECIDED"]


@dataclass
class FileVerdict:
    file: str
    hard: bool
    misses: list[list[str]]  # per run: the ids that missed (decided)
    ok: bool  # no breach, whatever the undecided items turn out to be
    undecided: list[list[str]] = field(default_factory=list)  # per run: the UNDECIDED ids
    breached: bool = False  # a decided breach: the file fails

    @property
    def verdict(self) -> str:
        return "ok" if self.ok else "FAIL" if self.breached else "UNDECIDED"


@dataclass
class GateResult:
    files: list[FileVerdict]
    structural: list[str]  # decided misses in every run
    regressions: list[str] = field(default_factory=list)
    comparison_line: str | None = None
    reasons: list[str] = field(default_factory=list)  # why it fails (decided)
    undecided: list[str] = field(default_factory=list)  # why it cannot be decided
    undecided_items: list[str] = field(default_factory=list)  # the items that leave it open
    judge_hint: str = TRUSTED_JUDGE_HINT
    samples: int = 0  # the runs' items, each repetition counted
    replayed: int = 0  # of them, those whose every model call was replayed from the cache
    partly_replayed: int = 0  # those that replayed some of their calls and made others
    cache: Policy | None = None  # the run's call-cache policy (None: not recorded)
    spend: list[str] = field(default_factory=list)  # the spend lines against the point

    @property
    def outcome(self) -> Outcome:
        return "FAIL" if self.reasons else "UNDECIDED" if self.undecided else "PASS"

    @property
    def passed(self) -> bool:
        return self.outcome == "PASS"

    @property
    def exit_code(self) -> int:
        return {"PASS": 0, "FAIL": 1, "UNDECIDED": UNDECIDED_EXIT}[self.outcome]


def _reason(result: CaseResult) -> str:
    for a in result.attempts:
        for c in a.checks:
            if not c.passed or not c.decided:
                return c.kind.split(" ")[0]
        if a.error:
            return "error"
    return result.status.lower()


def _missed(r: CaseResult) -> bool:
    """A decided miss: FAIL, FLAKY, SKIPPED, ERROR, or an UNDECIDED item whose first attempt
    failed (a miss whatever its judge says of the retry)."""
    return counted_status(r) not in ("PASS", "UNDECIDED")


def _open(r: CaseResult) -> bool:
    """Undecided, and a miss or not depending on a judge nobody trusts."""
    return counted_status(r) == "UNDECIDED"


def _file(name: str, results: list[CaseResult], runs: list[int], hard: bool) -> FileVerdict:
    misses = [[r.id for r in results if r.repetition == run and _missed(r)] for run in runs]
    open_ = [[r.id for r in results if r.repetition == run and _open(r)] for run in runs]
    allowed = 0 if hard else MISSES_ALLOWED
    breached = any(len(m) > allowed for m in misses)
    worst = any(len(m) + len(u) > allowed for m, u in zip(misses, open_, strict=True))
    return FileVerdict(name, hard, misses, ok=not worst, undecided=open_, breached=breached)


def _allowed(f: FileVerdict) -> str:
    return "none allowed (hard file)" if f.hard else f"{MISSES_ALLOWED} allowed"


def _replayed(r: CaseResult) -> Literal["all", "some", "none"]:
    """How much of a sample (its attempts, every job's calls) the call cache replayed."""
    replayed = sum(a.calls.replayed for a in r.attempts)
    made = sum(a.calls.made for a in r.attempts)
    return "none" if not replayed else "some" if made else "all"


def gate(results: list[CaseResult], hard: tuple[str, ...] = HARD_FILES,
         comparison: Comparison | None = None, judge_hint: str | None = None, *,
         max_cost_increase: float | None = None, max_p95_increase: float | None = None,
         cache: Policy | None = None) -> GateResult:
    """The gate's verdict on a run of two repetitions (and a comparison, if against a point);
    `judge_hint` says how this run's judge could earn trust (the default names the ways); the
    increase limits are in percent (None: no limit); `cache` is the run's call-cache policy
    (its settings'), for the verdict line."""
    runs = sorted({r.repetition for r in results})
    by_file: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_file[Path(r.file).stem].append(r)
    files, reasons, undecided = [], [], []
    for name in sorted(by_file):
        f = _file(name, by_file[name], runs, name in hard)
        files.append(f)
        if f.breached:
            worst = max(f.misses, key=len)
            reasons.append(f"{name}: {len(worst)} miss(es) in a run"
                           f" ({', '.join(sorted(set(worst)))}), {_allowed(f)}")
        elif not f.ok:
            ids = sorted({i for u in f.undecided for i in u})
            undecided.append(f"{name}: {len(ids)} undecided item(s) could break it"
                             f" ({', '.join(ids)}), {_allowed(f)}")
    structural, open_structural = [], []
    by_case: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_case[r.id].append(r)
    for cid, reps in sorted(by_case.items()):
        if len(runs) < 2 or len(reps) < len(runs):
            continue
        missed = [r for r in reps if _missed(r)]
        if len(missed) == len(runs):
            why = {_reason(r) for r in missed}
            same = "the same reason" if len(why) == 1 else "a different reason each time"
            structural.append(f"{cid}: missed in every run, for {same} ({', '.join(sorted(why))})")
        elif all(_missed(r) or _open(r) for r in reps):
            open_structural.append(cid)  # missed or undecided in every run, undecided in one
    if structural:
        reasons.append(f"structural failure: {', '.join(s.split(':')[0] for s in structural)}")
    if open_structural:
        undecided.append(f"possibly structural (missed or undecided in every run):"
                         f" {', '.join(open_structural)}")
    replays = [_replayed(r) for r in results]
    result = GateResult(files, structural, reasons=reasons, undecided=undecided,
                        judge_hint=judge_hint or TRUSTED_JUDGE_HINT, samples=len(results),
                        replayed=replays.count("all"), partly_replayed=replays.count("some"),
                        cache=cache)
    result.undecided_items = sorted({r.id for r in results if _open(r)}) if undecided else []
    if comparison is not None:
        # Items, as the McNemar line counts them (a repetition's pair is not a regression).
        result.regressions = [f"{cid}: {' → '.join(statuses(ps))}"
                              for cid, outcome, ps in by_item(comparison)
                              if outcome == "regressed"]
        result.comparison_line = comparison.verdict
        n = comparison.counts
        if comparison.p_value is not None and comparison.p_value < ALPHA and \
                n["regressed"] > n["improved"]:
            reasons.append(f"regressed against the point: {comparison.verdict}")
        if comparison.spend is not None:
            result.spend = render_spend(comparison.spend)
            reasons += limit_reasons(comparison.spend, max_cost_increase, max_p95_increase)
    elif max_cost_increase is not None or max_p95_increase is not None:
        result.spend = ["spend limits not checked: no comparison point to compare against"]
    if len(runs) < 2:
        reasons.append("the gate needs two runs (--repeat 2)")
    return result


def render(g: GateResult) -> str:
    lines = [f"{'file':<22} {'hard':<5} " + " ".join(f"run {i + 1:<8}" for i in
                                                      range(len(g.files[0].misses)))
             + " verdict"] if g.files else []
    for f in g.files:
        open_ = f.undecided or [[] for _ in f.misses]
        runs = " ".join(f"{len(m):>2} miss{f' +{len(u)}?' if u else '':<5}"
                        for m, u in zip(f.misses, open_, strict=True))
        lines.append(f"{f.file:<22} {'yes' if f.hard else 'no':<5} {runs} {f.verdict}")
    if any(u for f in g.files for u in f.undecided):
        lines.append("(+n?: n items UNDECIDED in that run, neither a miss nor a pass)")
    if g.structural:
        lines += ["", "structural (missed in every run, decided):",
                  *[f"  {s}" for s in g.structural]]
    if g.comparison_line is not None:
        lines += ["", "against the comparison point:",
                  *[f"  regressed: {r}" for r in g.regressions], f"  {g.comparison_line}"]
    if g.spend:  # under the comparison's lines, or a block of its own
        lines += ([] if g.comparison_line is not None else [""]) + [f"  {s}" for s in g.spend]
    if g.undecided:
        lines += ["", f"undecided ({len(g.undecided_items)} item(s) that no check or trusted"
                      f" judge decided: {', '.join(g.undecided_items)})",
                  f"  to decide them: {g.judge_hint}"]
    last = {"PASS": "GATE PASS", "FAIL": f"GATE FAIL: {'; '.join(g.reasons)}",
            "UNDECIDED": f"GATE UNDECIDED: {'; '.join(g.undecided)}"}[g.outcome]
    lines += ["", f"{last} ({replay_line(g)})"]
    return "\n".join(lines)


def replay_line(g: GateResult) -> str:
    """What the call cache gave the gate's samples: said whatever it gave, even nothing."""
    if g.cache == "off":
        return "call cache off"
    partly = f", {g.partly_replayed} partly" if g.partly_replayed else ""
    return f"{g.replayed} of {g.samples} samples replayed from the call cache{partly}"
