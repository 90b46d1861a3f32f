"""A stored run's recorded replies judged again by another judge (another model, or an evaluator
pack's prompt): every judged verdict of the run asked again, of the same reply and the
conversation the run's judge read, through the same judged checks (evals/checks/judged.py),
under the same trust rule (an untrusted judge is not called unless --advisory-judge) and through
the call cache. The result is an Assessment (evals/record/assessment.py) stored beside the
run's results: the original verdicts stay as they are.

The two judges are read side by side, verdict by verdict, with their agreement and Cohen's
kappa where defined (`calibrate`, with the original verdicts in a person's place: the same
floor of CALIBRATION_MIN_CASES verdicts and the same notes when kappa is undefined).

An item edited since the run (its content hash is not the plan's) or gone from the files is
left out and said: its rubric or criteria today may not be what was judged.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.chat.compose import user_message
from app.redact import redact
from evals.calibration.calibrate import VERDICTS, Calibration, Rated, calibrate
from evals.checks import CHECKS, CheckSpec, run_checks
from evals.execute.cache import CacheUse, cached, sample
from evals.execute.compose import load_photo
from evals.execute.guard import CallGuard, Spend
from evals.execute.lost import AskedAgain
from evals.fixtures.catalog import fixtures_for
from evals.judge.setup import JudgeSetup
from evals.load.cases import Case
from evals.load.items import EvalItem
from evals.load.plan import harness_hash
from evals.record.assessment import (
    AssessedCase,
    AssessedCheck,
    Assessment,
    AssessmentJudge,
    LeftOut,
    judge_named,
)
from evals.record.fingerprint import digest
from evals.record.results import Attempt, CaseResult, CheckResult, Status, classify, said
from evals.record.run import RunRecord
from evals.record.transcript import Transcript


@dataclass(frozen=True)
class Pair:
    """One judged verdict of the run: as the run's judge gave it and as the new judge does."""

    id: str
    repetition: int
    attempt: int
    check: int
    original: CheckResult
    new: CheckResult

    @property
    def key(self) -> str:
        return f"{self.id} #{self.repetition} a{self.attempt} c{self.check}"


@dataclass
class Rejudging:
    assessment: Assessment
    pairs: list[Pair]
    agreement: Calibration  # the new judge against the original verdicts
    moved: list[tuple[str, int, Status, Status]]  # items whose status the new verdicts change

    @property
    def unchanged(self) -> int:
        return len(self.assessment.cases) - len(self.moved)


@dataclass(frozen=True)
class _Todo:
    case: CaseResult
    item: EvalItem
    attempt: int
    check: int
    spec: CheckSpec
    transcript: Transcript


def as_judged(item: EvalItem, attempt: Attempt, endpoint: bool) -> Transcript:
    """The attempt's transcript as the run's judge read it. The record keeps no `messages`
    (what the model was sent, which a case's judge reads its conversation from), so a single
    turn's are made again as its executor made them: the earlier turns, then the prompt (with
    the photos' hint on the app's path; a PDF part carries no text the judge reads)."""
    if not isinstance(item, Case):
        return attempt.transcript  # a conversation's judge reads its turns, which are kept
    last = {"role": "user", "content": item.prompt} if endpoint else \
        user_message(item.prompt, tuple(load_photo(p) for p in item.photos))
    return attempt.transcript.model_copy(update={
        "messages": [*item.history_messages(), last]})


def _plan(record: RunRecord, items: Sequence[EvalItem]
          ) -> tuple[list[_Todo], list[LeftOut]]:
    """Every judged verdict of the run that can be asked again, and what cannot, with why."""
    by_id = {i.id: i for i in items}
    planned = record.plan.cases if record.plan is not None else {}
    todo: list[_Todo] = []
    left_out: list[LeftOut] = []
    for case in record.cases:
        judged = [(a, n, c) for a, attempt in enumerate(case.attempts, start=1)
                  for n, c in enumerate(attempt.checks, start=1) if c.judged]
        if not judged:
            continue
        item = by_id.get(case.id)
        why = ("no longer in the case files" if item is None else
               "edited since the run: its rubric or criteria may not be what was judged"
               if planned.get(case.id) != digest(item.content()) else None)
        if item is None or why is not None:
            left_out.append(LeftOut(id=case.id, repetition=case.repetition,
                                    reason=why or "?"))
            continue
        specs = {s.describe(): s for s in item.checks if CHECKS[s.kind].needs_judge}
        try:
            transcripts = [as_judged(item, a, record.models.endpoint is not None)
                           for a in case.attempts]
        except OSError as exc:  # a photo fixture gone: the judge would not read what it did
            left_out.append(LeftOut(id=case.id, repetition=case.repetition,
                                    reason=f"its photo cannot be read: {exc}"))
            continue
        for a, n, check in judged:
            spec = specs.get(check.kind)
            if spec is None:
                left_out.append(LeftOut(id=case.id, repetition=case.repetition,
                                        reason=f"attempt {a} check {n} ({check.kind}) is not a"
                                               " judged check of the item today"))
                continue
            todo.append(_Todo(case, item, a, n, spec, transcripts[a - 1]))
    return todo, left_out


async def rejudge(record: RunRecord, items: Sequence[EvalItem], judge: JudgeSetup, *,
                  assessment_id: str, cache: CacheUse, concurrency: int,
                  spend: Spend | None = None) -> Rejudging:
    """Judge the run's judged verdicts again with `judge` (a guard and the call cache before
    it, as a run's judge has: its calls are kept under the assessment's id, and drawn on
    `spend`, the command's budget), as an assessment of the run; nothing is stored here."""
    todo, left_out = _plan(record, items)
    # A call lost to the provider is asked again in place, after what the provider asked, as
    # a run's judge is (evals/execute/lost.py); still lost, the verdict is an error.
    guard = AskedAgain(CallGuard(judge.model, concurrency, spend=spend, job="judge"), "judge")
    setup = replace(judge, model=cached(guard, cache.cache, job="judge", run_id=assessment_id,
                                        policy=cache.policy))
    calls = Counter[str]()

    async def one(t: _Todo) -> Pair:
        about = t.item.context.about(t.item.photos)
        # The run's sample (repetition, attempt): a call the very same judge made for it then
        # is replayed from the cache instead of made again (--cache refresh makes it).
        with sample(t.case.repetition, t.attempt, assessment_id) as tally:
            new, = await run_checks((t.spec,), t.transcript, fixtures_for(t.item.context.catalog),
                                    setup, about)
        # Each verdict asked is one call, made or replayed (a tally counts only through the
        # cache: with it off, every one was made).
        asked = int(new.judge is not None and new.judge.asked)
        calls.update(made=asked - min(asked, tally.replayed), replayed=min(asked, tally.replayed))
        original = t.case.attempts[t.attempt - 1].checks[t.check - 1]
        return Pair(t.case.id, t.case.repetition, t.attempt, t.check, original, new)

    pairs = list(await asyncio.gather(*(one(t) for t in todo)))
    cases, moved = _assessed(record, pairs)
    packed = judge.pack is not None
    trust = judge.trust_for(packed)
    assessment = Assessment(
        id=assessment_id, run_id=str(record.run_id), kind="rejudge",
        created=dt.datetime.now(dt.UTC).isoformat(), harness=harness_hash(),
        judge=AssessmentJudge(model=judge.model.model_id, prompt_hash=judge.prompt_hash,
                              pack=judge.pack.ref if judge.pack else None,
                              decides=trust.trusted or judge.forced, trust=trust.reason,
                              trusted_by_flag=judge.forced and not trust.trusted,
                              advisory=judge.advisory, calls_made=calls["made"],
                              calls_replayed=calls["replayed"]),
        left_out=left_out, cases=cases)
    return Rejudging(assessment, pairs, agreement(pairs), moved)


def _assessed(record: RunRecord, pairs: list[Pair]
              ) -> tuple[list[AssessedCase], list[tuple[str, int, Status, Status]]]:
    """Each re-judged case with the new verdicts in its judged checks' places (the structural
    checks as recorded), and its status under them."""
    by_case: dict[tuple[str, int], list[Pair]] = {}
    for p in pairs:
        by_case.setdefault((p.id, p.repetition), []).append(p)
    cases, moved = [], []
    for case in record.cases:
        mine = by_case.get((case.id, case.repetition))
        if not mine:
            continue
        new = {(p.attempt, p.check): p.new for p in mine}
        attempts = [a.model_copy(update={"checks": [new.get((i, n), c) for n, c in
                                                    enumerate(a.checks, start=1)]})
                    for i, a in enumerate(case.attempts, start=1)]
        status = classify(attempts)
        cases.append(AssessedCase(id=case.id, repetition=case.repetition, status=status,
                                  checks=[AssessedCheck(attempt=p.attempt, check=p.check,
                                                        result=p.new) for p in mine]))
        if status != case.status:
            moved.append((case.id, case.repetition, case.status, status))
    return cases, moved


def agreement(pairs: list[Pair]) -> Calibration:
    """The new judge against the original verdicts, over the verdicts the original judge gave
    (pass or fail): the table, agreement and kappa, through the calibration's own rules."""
    labels = {p.key: said(p.original) for p in pairs if said(p.original) in VERDICTS}
    rated = [Rated(p.key, said(p.new) if said(p.new) in VERDICTS else None, p.new.reason)
             for p in pairs if p.key in labels]
    return calibrate(rated, labels)


def render(result: Rejudging, record: RunRecord) -> str:
    """The two judges side by side: per verdict, the totals, the agreement, the statuses the
    new verdicts move, what was left out and where the assessment is stored."""
    a = result.assessment
    judge = a.judge
    assert judge is not None
    originals = sorted({_who(p.original) for p in result.pairs})
    lines = [f"rejudge of run {record.run_id}: {len(result.pairs)} judged verdict(s) in"
             f" {len(a.cases)} stored result(s) of {len({c.id for c in a.cases})} item(s)",
             f"original judge: {', '.join(originals) or 'none'}",
             f"new judge: {judge.named()}: {judge.role()} ({judge.trust})", ""]
    width = max([len(p.id) for p in result.pairs] + [4])
    lines.append(f"{'item':<{width}}  rep att chk  {'original':<10} {'new':<10} agree  check")
    for p in result.pairs:
        old, new = said(p.original), said(p.new)
        agree = ("yes" if old == new else "no") if old in VERDICTS and new in VERDICTS \
            else "—"
        kind = p.original.kind if len(p.original.kind) <= 48 else p.original.kind[:47] + "…"
        lines.append(f"{p.id:<{width}}  {p.repetition:>3} {p.attempt:>3} {p.check:>3}  "
                     f"{old:<10} {new:<10} {agree:<5}  {kind}")
    for p in result.pairs:
        old, new = said(p.original), said(p.new)
        if old in VERDICTS and new in VERDICTS and old != new:
            lines += [f"  ≠ {p.key} ({p.original.kind})",
                      f"      original {old}: {p.original.reason}",
                      f"      new {new}: {p.new.reason}"]
    lines += ["", _totals(result.pairs), _agreement_line(result.agreement)]
    lines.append(f"statuses under the new verdicts: {len(result.moved)} changed"
                 + "".join(f" ({move})" for move in _moves(result.moved))
                 + f", {result.unchanged} unchanged")
    for left in a.left_out:
        lines.append(f"left out: {left.id} #{left.repetition} ({left.reason})")
    lines.append(f"judge calls: {judge.calls_made} made, {judge.calls_replayed} replayed from"
                 " the call cache")
    return redact("\n".join(lines))  # a judge's reason may quote what it judged


def _moves(moved: list[tuple[str, int, Status, Status]]) -> list[str]:
    """The status changes grouped by change, each item with its repetitions:
    "UNDECIDED → PASS: a #1 #2, b #1"."""
    groups: dict[tuple[str, str], dict[str, list[int]]] = {}
    for cid, rep, was, now in moved:
        groups.setdefault((was, now), {}).setdefault(cid, []).append(rep)
    return [f"{was} → {now}: " + ", ".join(f"{cid} " + " ".join(f"#{r}" for r in reps)
                                           for cid, reps in items.items())
            for (was, now), items in groups.items()]


def _who(check: CheckResult) -> str:
    j = check.judge
    if j is None:
        return "?"
    return judge_named(j.model, j.prompt_hash, j.pack)


def _totals(pairs: list[Pair]) -> str:
    def counts(side: list[str]) -> str:
        c = Counter(side)
        return ", ".join(f"{c[k]} {k}" for k in ("pass", "fail", "not asked", "error", "none")
                         if c[k])

    both = [(said(p.original), said(p.new)) for p in pairs
            if said(p.original) in VERDICTS and said(p.new) in VERDICTS]
    agree = sum(old == new for old, new in both)
    original = counts([said(p.original) for p in pairs]) or "none"
    new = counts([said(p.new) for p in pairs]) or "none"
    return (f"totals: {len(pairs)} verdict(s) · original: {original} · new: {new} · both gave"
            f" a verdict on {len(both)}: {agree} agree, {len(both) - agree} disagree")


def _agreement_line(c: Calibration) -> str:
    if c.agreement is None:
        return f"agreement between the two judges: not reported ({c.note})"
    kappa = f"Cohen's kappa {c.kappa:.2f}" if c.kappa is not None else f"kappa: {c.note}"
    return (f"agreement between the two judges: {c.agreement:.0%} on {c.rated} verdict(s);"
            f" {kappa}")


__all__ = ["Pair", "Rejudging", "agreement", "as_judged", "rejudge", "render"]
