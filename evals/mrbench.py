"""Calibrating the judge on MRBench: tutors' replies that trained annotators rated.

The data file (MRBench V2 JSON: dialogues, each with several tutors' replies and the
annotators' labels per dimension) is not shipped; give its path. Each dimension becomes a
rubric for the same judge, and the annotators' answers map to a person's pass/fail:

| Dimension | pass | fail | left out |
| --- | --- | --- | --- |
| Mistake_Identification | Yes | No | To some extent |
| Revealing_of_the_Answer | No | Yes (…) | — |
| Providing_Guidance | Yes | No | To some extent |
| Actionability | Yes | No | To some extent |

The figures describe this judge model on these tutoring replies, not on the lab assistant.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from app.chat.models import ChatModel, ModelCallError
from evals.calibrate import Calibration, CalibrationError, Rated, calibrate
from evals.judge import TUTORING, JudgeInput, UnreadableVerdict, judge


@dataclass(frozen=True)
class Dimension:
    name: str
    rubric: str
    must_not: str | None
    passes: tuple[str, ...]
    fails: tuple[str, ...]  # prefixes


DIMENSIONS = (
    Dimension("Mistake_Identification",
              "The tutor's reply recognises that the student's solution contains a mistake.",
              None, ("Yes",), ("No",)),
    Dimension("Revealing_of_the_Answer",
              "The tutor's reply leaves the final answer for the student to find.",
              "State the final answer to the problem.", ("No",), ("Yes",)),
    Dimension("Providing_Guidance",
              "The tutor's reply gives correct, relevant guidance (a hint, an explanation or a"
              " question) that helps the student work out the problem.",
              None, ("Yes",), ("No",)),
    Dimension("Actionability",
              "After the tutor's reply it is clear what the student should do next.",
              None, ("Yes",), ("No",)),
)


def person_label(dim: Dimension, answer: str) -> str | None:
    if answer in dim.passes:
        return "pass"
    if any(answer.startswith(f) for f in dim.fails):
        return "fail"
    return None


@dataclass(frozen=True)
class Item:
    id: str
    history: str
    solution: str
    reply: str
    annotation: dict[str, str]


def load_items(path: Path, limit: int) -> list[Item]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{path}: {exc}") from exc
    if not isinstance(data, list):
        raise CalibrationError(f"{path}: expected a list of MRBench dialogues")
    items = []
    for i, d in enumerate(data):
        try:
            for tutor, r in d["anno_llm_responses"].items():
                items.append(Item(f"{d['conversation_id']}:{tutor}", d["conversation_history"],
                                  d.get("Ground_Truth_Solution", ""), r["response"],
                                  r["annotation"]))
        except (KeyError, TypeError, AttributeError) as exc:
            raise CalibrationError(f"{path}: dialogue {i} lacks {exc}") from exc
    return items[:limit]


async def rate(items: list[Item], dims: tuple[Dimension, ...], model: ChatModel,
               concurrency: int = 2) -> dict[str, tuple[list[Rated], dict[str, str]]]:
    """Per dimension: the judge's verdicts and the annotators' labels."""
    limit = asyncio.Semaphore(concurrency)
    out: dict[str, tuple[list[Rated], dict[str, str]]] = {d.name: ([], {}) for d in dims}

    async def one(item: Item, dim: Dimension) -> None:
        label = person_label(dim, item.annotation.get(dim.name, ""))
        if label is None:
            return
        out[dim.name][1][item.id] = label
        ji = JudgeInput(
            rubric=dim.rubric, must_not=dim.must_not,
            conversation=[{"role": "user", "content": item.history}], reply=item.reply,
            tool_calls=[], pictures=[],
            reference={"setting": "a maths tutoring dialogue; the reply is the tutor's next"
                       " turn", "correct_solution": item.solution},
        )
        async with limit:
            try:
                v = await judge(model, ji, TUTORING)
                out[dim.name][0].append(Rated(item.id, "pass" if v.passed else "fail",
                                              v.reason))
            except (UnreadableVerdict, ModelCallError) as exc:
                out[dim.name][0].append(Rated(item.id, None, str(exc)))

    await asyncio.gather(*(one(i, d) for i in items for d in dims))
    return out


def report(rated: dict[str, tuple[list[Rated], dict[str, str]]]) -> dict[str, Calibration]:
    return {name: calibrate(r, labels) for name, (r, labels) in rated.items()}


__all__ = ["DIMENSIONS", "load_items", "rate", "report"]
