"""The narrow questions earn trust like any judge prompt (evals/judge/questions.py): a judge
model answers a question kind about the sentences of labelled answers of the check it settles
(the tuned corpus and the held-out sets, tests/evals/labelled/), and its answers, read as that
check's verdict, are compared with people's labels: `python -m evals calibrate --questions`.

An answer's verdict from the judge: a "yes" about any of its sentences (the lab has it; the
change was made) fails it; "no" about every one passes it; otherwise (unclear, unreadable, a
failed call) it is left out as unrated. An answer with nothing to ask about (no machine the
catalogue lacks is named) is not rated: the question is never asked of such answers.
"""

from __future__ import annotations

import asyncio

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.accuracy import LabelledItem, load_sets
from evals.calibration.calibrate import Rated
from evals.checks._text import sentences
from evals.checks.grounding import unknown_mentions
from evals.fixtures.catalog import fixtures_for
from evals.judge import UnreadableVerdict
from evals.judge.questions import QUESTIONS, Question, ask

QUESTION_SET = "labelled-checks"  # the set a question kind's record names
MAX_ASKED = 6  # sentences asked about per answer, at most


def asked_about(question: Question, item: LabelledItem) -> list[tuple[str, str]]:
    """The (sentence, subject) pairs of a labelled answer this question is asked about."""
    if question.kind == "lab_has":
        return unknown_mentions(item.answer, fixtures_for(item.catalog))[:MAX_ASKED]
    return [(s, "") for s in sentences(item.answer)][:MAX_ASKED]


def labelled_for(question: Question) -> list[tuple[str, LabelledItem]]:
    """The labelled English answers of the check this question settles, with a pass or fail
    label and something to ask about."""
    return [(where, item) for where, item, _ in load_sets()
            if item.check.get("kind") == question.check and item.verdict != "unclear"
            and item.language == "en" and asked_about(question, item)]


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
