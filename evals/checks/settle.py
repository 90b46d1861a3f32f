"""Settling an undecided structural verdict: a check that cannot place a sentence says which
question would settle it (`Doubt`); a judge trusted for that question kind is asked it about
that one sentence, and its answer becomes the verdict, recorded as the judge's. Without a
trusted judge, or on "unclear", the verdict stays UNDECIDED with the reason. A judge that
fails leaves it undecided too: the question was never answered, so nothing was decided.
"""

from __future__ import annotations

from typing import Protocol

from app.chat.models import ModelCallError
from evals.judge import UnreadableVerdict
from evals.judge.questions import QUESTIONS, ask
from evals.judge.setup import JudgeSetup
from evals.record.results import CheckResult, JudgeVerdict
from evals.record.transcript import Transcript


class Open(Protocol):
    """An undecided verdict's reason that says which question settles it (the registry's
    `Doubt`)."""

    question: str
    sentence: str
    subject: str


async def settle(result: CheckResult, doubt: Open, transcript: Transcript,
                 judge: JudgeSetup | None) -> CheckResult:
    """The undecided `result` settled by a narrow question to a trusted judge, if there is
    one; otherwise the same result, its reason saying why it stays undecided."""
    question = QUESTIONS[doubt.question]
    if judge is None:
        return result.model_copy(update={"reason": f"{doubt} (no judge settles it)"})
    trust = judge.settles(question.kind)
    meta = JudgeVerdict(model=judge.model.model_id, prompt_hash=question.hash(),
                        trust=trust.reason, trusted_by_flag=judge.forced and
                        not judge.questions.get(question.kind, trust).trusted)
    if not trust.trusted:
        return result.model_copy(update={
            "reason": f"{doubt} (not settled: {trust.reason})",
            "judge": meta.model_copy(update={"asked": False})})
    try:
        answer, why = await ask(judge.model, question, doubt.sentence, doubt.subject,
                                transcript.answer)
    except (UnreadableVerdict, ModelCallError) as exc:
        return result.model_copy(update={
            "reason": f"{doubt} (the judge could not settle it: {exc})", "judge": meta})
    if answer == "unclear":
        return result.model_copy(update={
            "reason": f"{doubt} (the judge finds it unclear: {why})", "judge": meta})
    passed = (answer == "yes") == question.yes_passes
    return result.model_copy(update={
        "passed": passed, "decided": True, "reason": f"{doubt} Settled by the judge,"
        f" {question.kind} {answer}: {why}",
        "judge": meta.model_copy(update={"verdict": "pass" if passed else "fail"})})
