"""Re-score a run from its record: the current structural checks on the recorded answers.

No model is called. Judged verdicts are carried over as they were recorded (judging again
takes a model call). A recorded case whose file no longer loads is an ERROR that names the
load error; a re-score that checks nothing is refused.
"""

from __future__ import annotations

from pathlib import Path

from evals.checks import measure_checks, run_checks, structural_only
from evals.execute.executors import HIDDEN, HIDDEN_WHY
from evals.fixtures.catalog import fixtures_for
from evals.load.cases import Case
from evals.record.results import Attempt, CaseResult, CheckResult, classify
from evals.record.run import RunRecord
from evals.record.transcript import Turn


async def _structural(case: Case, attempt: Attempt, endpoint: bool) -> list[CheckResult]:
    transcript = attempt.transcript
    if endpoint and not transcript.unseen:  # recorded before a transcript said what it hid
        transcript = transcript.model_copy(update={"unseen": sorted(HIDDEN),
                                                   "unseen_why": HIDDEN_WHY})
    if not transcript.turns:  # a single exchange is stored without it: the case has it
        transcript = transcript.model_copy(update={"turns": [
            Turn.model_validate(m) for m in [*case.history_messages(),
                                             {"role": "user", "content": case.prompt},
                                             {"role": "assistant", "content": attempt.answer}]]})
    checks = await run_checks(structural_only(case.checks), transcript,
                              fixtures_for(case.context.catalog), None, case.context.about())
    checks += measure_checks(case.checks, attempt)  # today's limits on the recorded figures
    if not attempt.answer.strip():
        checks.insert(0, CheckResult(kind="answer", passed=False, reason="no answer"))
    return checks


async def rescore(record: RunRecord, cases: list[Case],
                  load_errors: dict[str, list[str]] | None = None) -> list[CaseResult]:
    """Each recorded attempt checked again with today's case files."""
    by_id = {c.id: c for c in cases}
    load_errors = load_errors or {}
    results = []
    for recorded in record.cases:
        case = by_id.get(recorded.id)
        if case is None:
            broken = load_errors.get(Path(recorded.file).name)
            if broken:
                results.append(CaseResult(
                    id=recorded.id, file=recorded.file, prompt=recorded.prompt, status="ERROR",
                    repetition=recorded.repetition,
                    attempts=[Attempt(error=f"its case file no longer loads: {broken[0]}"
                                      + (f" (+{len(broken) - 1} more)" if len(broken) > 1
                                         else ""))]))
            else:
                results.append(CaseResult(id=recorded.id, file=recorded.file,
                                          prompt=recorded.prompt, status="SKIPPED",
                                          repetition=recorded.repetition,
                                          skipped_reason="no longer in the case files"))
            continue
        if recorded.status == "SKIPPED" or not recorded.attempts:
            results.append(CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                      status="SKIPPED", repetition=recorded.repetition,
                                      skipped_reason=recorded.skipped_reason or "not run"))
            continue
        attempts = []
        for a in recorded.attempts:
            if a.error and not a.answer:
                attempts.append(Attempt(error=a.error))
                continue
            judged = [c for c in a.checks if c.judged]  # a settled structural one re-runs
            if case.judged and not judged:  # judged since the run: only a model call can judge
                judged = [CheckResult(kind="judge", passed=False, decided=False,
                                      reason="the case is judged now but was not when it ran;"
                                             " a rescore cannot judge it")]
            checks = await _structural(case, a, record.models.endpoint is not None) + judged
            attempts.append(a.model_copy(update={"checks": checks}))
        results.append(CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                  status=classify(attempts), attempts=attempts,
                                  repetition=recorded.repetition, group=case.group,
                                  attack=case.attack, context=case.context.key))
    return results


def checked_anything(results: list[CaseResult]) -> bool:
    return any(r.status not in ("SKIPPED", "ERROR") for r in results)


