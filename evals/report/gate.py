"""The gate before a model switch or a prompt change, as a program (seed 001's policy).

Two runs (one run with two repetitions). The hard files (honest-absence and manual-grounding
unless told otherwise) allow no FAIL, FLAKY, SKIPPED, UNDECIDED or ERROR in either run; every
other file allows one miss (any status but PASS) per run. A case that misses in both runs is
structural, whether for the same reason or a different one, and fails the gate whatever the
count. Against a comparison point, the regressions are listed with the McNemar line, and a
regression distinguishable from noise fails the gate; so does a rise in cost per item or p95
latency past its limit, or one that cannot be checked (evals/report/spend.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from evals.record.comparison import Comparison
from evals.record.results import CaseResult
from evals.report.compare import ALPHA
from evals.report.spend import limit_reasons, render_spend

HARD_FILES = ("honest-absence", "manual-grounding")
MISSES_ALLOWED = 1


@dataclass
class FileVerdict:
    file: str
    hard: bool
    misses: list[list[str]]  # per run: the ids that missed
    ok: bool


@dataclass
class GateResult:
    files: list[FileVerdict]
    structural: list[str]
    regressions: list[str] = field(default_factory=list)
    comparison_line: str | None = None
    reasons: list[str] = field(default_factory=list)
    samples: int = 0  # the runs' items, each repetition counted
    replayed: int = 0  # of them, those whose every model call was replayed from the cache
    spend: list[str] = field(default_factory=list)  # the spend lines against the point

    @property
    def passed(self) -> bool:
        return not self.reasons


def _reason(result: CaseResult) -> str:
    for a in result.attempts:
        for c in a.checks:
            if not c.passed or not c.decided:
                return c.kind.split(" ")[0]
        if a.error:
            return "error"
    return result.status.lower()


def gate(results: list[CaseResult], hard: tuple[str, ...] = HARD_FILES,
         comparison: Comparison | None = None, *, max_cost_increase: float | None = None,
         max_p95_increase: float | None = None) -> GateResult:
    """The gate's verdict; the increase limits are in percent (None: no limit)."""
    runs = sorted({r.repetition for r in results})
    by_file: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_file[Path(r.file).stem].append(r)
    files, reasons = [], []
    for name in sorted(by_file):
        is_hard = name in hard
        misses = [[r.id for r in by_file[name] if r.repetition == run and r.status != "PASS"]
                  for run in runs]
        ok = all(not m for m in misses) if is_hard else all(len(m) <= MISSES_ALLOWED
                                                            for m in misses)
        files.append(FileVerdict(name, is_hard, misses, ok))
        if not ok:
            worst = max(misses, key=len)
            reasons.append(f"{name}: {len(worst)} miss(es) in a run"
                           f" ({', '.join(sorted(set(worst)))}), "
                           + ("none allowed (hard file)" if is_hard
                              else f"{MISSES_ALLOWED} allowed"))
    structural = []
    by_case: dict[str, list[CaseResult]] = defaultdict(list)
    for r in results:
        by_case[r.id].append(r)
    for cid, reps in sorted(by_case.items()):
        missed = [r for r in reps if r.status != "PASS"]
        if len(runs) > 1 and len(missed) == len(runs):
            why = {_reason(r) for r in missed}
            same = "the same reason" if len(why) == 1 else "a different reason each time"
            structural.append(f"{cid}: missed in every run, for {same} ({', '.join(sorted(why))})")
    if structural:
        reasons.append(f"structural failure: {', '.join(s.split(':')[0] for s in structural)}")
    result = GateResult(files, structural, reasons=reasons, samples=len(results),
                        replayed=sum(1 for r in results if r.attempts and
                                     all(a.calls.all_replayed for a in r.attempts)))
    if comparison is not None:
        result.regressions = [f"{p.id} #{p.repetition}: {p.baseline} → {p.current}"
                              for p in comparison.pairs if p.outcome == "regressed"]
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
    lines = [f"{'file':<22} {'hard':<5} " + " ".join(f"run {i + 1:<6}" for i in
                                                      range(len(g.files[0].misses)))
             + " verdict"] if g.files else []
    for f in g.files:
        runs = " ".join(f"{len(m):>2} miss " for m in f.misses)
        lines.append(f"{f.file:<22} {'yes' if f.hard else 'no':<5} {runs} "
                     f"{'ok' if f.ok else 'FAIL'}")
    if g.structural:
        lines += ["", "structural (missed in every run):", *[f"  {s}" for s in g.structural]]
    if g.comparison_line is not None:
        lines += ["", "against the comparison point:",
                  *[f"  regressed: {r}" for r in g.regressions], f"  {g.comparison_line}"]
    if g.spend:  # under the comparison's lines, or a block of its own
        lines += ([] if g.comparison_line is not None else [""]) + [f"  {s}" for s in g.spend]
    replayed = f" ({g.replayed} of {g.samples} samples replayed from the call cache)" \
        if g.replayed else ""
    lines += ["", ("GATE PASS" if g.passed else f"GATE FAIL: {'; '.join(g.reasons)}")
              + replayed]
    return "\n".join(lines)
