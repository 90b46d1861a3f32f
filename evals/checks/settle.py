"""Settling an undecided structural verdict: a check that cannot place sentences says which
question would settle them (`Doubt`); a judge trusted for that question kind is asked it about
each of those sentences, and its answers become the verdict, recorded as the judge's. Without a
trusted judge, or on "unclear", the verdict stays UNDECIDED with the reason. A judge that
fails leaves it undecided too: the question was never answered, so nothing was decided (in a
run, a judge's call the provider lost makes the attempt an ERROR: evals/execute/lost.py).
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
    `Doubt`): its kind and every (sentence, subject) it could not place."""

    question: str
    asks: tuple[tuple[str, str], ...]


async def settle(result: CheckResult, doubt: Open, transcript: Transcript,
                 judge: JudgeSetup | None) -> CheckResult:
    """The undecided `result` settled by narrow questions to a trusted judge, one per sentence
    the check could not place, if there is one: a yes to any decides it as a yes does, and
    only a no to every one decides the other way; otherwise the same result, its reason saying
    why it stays undecided."""
    question = QUESTIONS[doubt.question]
    if judge is None:
        return result.model_copy(update={"reason": f"{doubt} (no judge settles it)"})
    trust = judge.settles(question.kind)
    earned = judge.questions.get(question.kind)
    meta = JudgeVerdict(model=judge.model.model_id, prompt_hash=question.hash(),
                        trust=trust.reason, question=question.kind,
                        trusted_by_flag=judge.forced and not (earned and earned.trusted))
    if not trust.trusted:
        return result.model_copy(update={
            "reason": f"{doubt} (not settled: {trust.reason})",
            "judge": meta.model_copy(update={"asked": False})})
    said = []
    for sentence, subject in doubt.asks:
        try:
            answer, why = await ask(judge.model, question, sentence, subject, transcript.answer)
        except (UnreadableVerdict, ModelCallError) as exc:
            return result.model_copy(update={
                "reason": f"{doubt} (the judge could not settle it: {exc})", "judge": meta})
        if answer == "unclear":
            return result.model_copy(update={
                "reason": f"{doubt} (the judge finds “{sentence}” unclear: {why})",
                "judge": meta})
        if answer == "yes":  # one yes decides it
            return _decided(result, doubt, meta, question.yes_passes,
                            f"{question.kind} yes about “{sentence}”: {why}")
        said.append(why)
    return _decided(result, doubt, meta, not question.yes_passes,
                    f"{question.kind} no about {len(said)} sentence(s): {said[-1]}")


def _decided(result: CheckResult, doubt: Open, meta: JudgeVerdict, passed: bool, how: str
             ) -> CheckResult:
    return result.model_copy(update={
        "passed": passed, "decided": True, "reason": f"{doubt} Settled by the judge, {how}",
        "judge": meta.model_copy(update={"verdict": "pass" if passed else "fail"})})
