"""The narrow questions earn trust like any judge prompt (evals/judge/questions.py), on the
task a run gives them: a judge model answers a question kind about exactly the sentences its
check could not place in the labelled answers of that check (the tuned corpus and the held-out
sets, tests/evals/labelled/, English), and its answers, read as the check's verdict, are
compared with people's labels: `python -m evals calibrate --questions`.

An answer's verdict from the judge: a "yes" about any of those sentences (the lab has it; the
change was made) fails it; "no" about every one passes it; otherwise (unclear, unreadable, a
failed call) it is left out as unrated. An answer the check decides by itself is never asked
about, in a run or here.
"""

from __future__ import annotations

import asyncio
from itertools import islice

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.accuracy import LabelledItem, load_sets
from evals.calibration.calibrate import Rated
from evals.checks import CHECKS
from evals.checks._registry import Doubt
from evals.fixtures.catalog import fixtures_for
from evals.judge import UnreadableVerdict
from evals.judge.questions import QUESTIONS, Question, ask
from evals.record.transcript import Transcript, Turn

QUESTION_SET = "labelled-checks"  # the set a question kind's record names


def asked_about(question: Question, item: LabelledItem) -> tuple[tuple[str, str], ...]:
    """The (sentence, subject) pairs of a labelled answer this question would be asked about
    in a run: those its check leaves undecided."""
    spec = CHECKS[question.check]
    assert spec.check is not None
    args = spec.args.model_validate({k: v for k, v in item.check.items() if k != "kind"})
    turn = Transcript(answer=item.answer, turns=[Turn(role="assistant", content=item.answer)])
    passed, reason = spec.check(turn, args, fixtures_for(item.catalog))
    if passed is None and isinstance(reason, Doubt) and reason.question == question.kind:
        return reason.asks
    return ()


def labelled_for(question: Question, limit: int | None = None
                 ) -> list[tuple[str, LabelledItem]]:
    """The labelled English answers of the check this question settles, with a pass or fail
    label and something to ask about; the first `limit` of them (the check runs on no more
    answers than it takes to find them)."""
    found = ((where, item) for where, item, _ in load_sets()
             if item.check.get("kind") == question.check and item.verdict != "unclear"
             and item.language == "en" and asked_about(question, item))
    return list(islice(found, limit))


async def rate_questions(question: Question, items: list[tuple[str, LabelledItem]],
                         model: ChatModel, concurrency: int = 2
                         ) -> tuple[list[Rated], dict[str, str]]:
    """The judge's reading of each labelled answer through this question, and the labels."""
    limit = asyncio.Semaphore(concurrency)

    async def one(where: str, item: LabelledItem) -> Rated:
        said = []
        for sentence, subject in asked_about(question, item):
            async with limit:
                try:
                    answer, why = await ask(model, question, sentence, subject, item.answer)
                except (UnreadableVerdict, ModelCallError) as exc:
                    return Rated(where, None, str(exc))
            if answer == "yes":
                passed = question.yes_passes
                return Rated(where, "pass" if passed else "fail", why)
            said.append(answer)
        if all(a == "no" for a in said):
            return Rated(where, "fail" if question.yes_passes else "pass", "no to every one")
        return Rated(where, None, "unclear")

    rated = await asyncio.gather(*(one(w, i) for w, i in items))
    return list(rated), {w: i.verdict for w, i in items}


__all__ = ["QUESTIONS", "QUESTION_SET", "asked_about", "labelled_for", "rate_questions"]
