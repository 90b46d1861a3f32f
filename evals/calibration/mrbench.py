"""MRBench: calibrating the judge on tutors' replies that trained annotators rated, and
running the public set as a suite against a tutoring endpoint (`run --suite mrbench`).

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
import re
import time
from dataclasses import dataclass
from pathlib import Path

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.calibrate import Calibration, CalibrationError, Rated, calibrate
from evals.judge import TUTORING, JudgeInput, UnreadableVerdict, judge
from evals.record.results import Attempt, CaseResult, CheckResult, JudgeVerdict, classify
from evals.record.transcript import Transcript, Turn


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




# MRBench as a suite: a tutoring endpoint answers each dialogue, the judge rates the reply ----

SUITE_SYSTEM = ("You are a maths tutor. Reply to the student's last message as their tutor:"
                " help them find and fix their mistake without giving away the answer.")
_SPEAKER = re.compile(r"(?:^|(?<=\s))(Tutor|Student)\s*:")  # as MRBench writes them


@dataclass(frozen=True)
class Dialogue:
    id: str
    messages: list[dict[str, str]]  # the conversation so far, the student's turn last
    solution: str


def dialogue_messages(history: str) -> list[dict[str, str]]:
    """MRBench's "Tutor: … Student: …" history as chat messages (tutor = assistant); a
    speaker starts a message at the start of the text or after white space."""
    parts = _SPEAKER.split(history)
    if parts[0].strip():  # text before the first speaker: what the student was shown
        parts = ["", "Student", *parts]
    messages = [{"role": "assistant" if who.lower() == "tutor" else "user",
                 "content": "\n".join(line.strip() for line in text.replace("\xa0", " ")
                                      .splitlines() if line.strip())}
                for who, text in zip(parts[1::2], parts[2::2], strict=True)]
    messages = [m for m in messages if m["content"]]
    return messages or [{"role": "user", "content": history.strip()}]


def load_dialogues(path: Path, limit: int) -> list[Dialogue]:
    """Each dialogue once (MRBench lists several tutors' replies per dialogue)."""
    seen: dict[str, Dialogue] = {}
    for item in load_items(path, 10**9):
        key = item.id.rsplit(":", 1)[0]
        if key not in seen:
            seen[key] = Dialogue(key, dialogue_messages(item.history), item.solution)
        if len(seen) >= limit:
            break
    if not seen:
        raise CalibrationError(f"{path}: no dialogue")
    return list(seen.values())


async def run_suite(dialogues: list[Dialogue], endpoint: ChatModel, judge_model: ChatModel,
                    decides: bool, *, concurrency: int = 2) -> list[CaseResult]:
    """Each dialogue sent to the endpoint; its reply judged on every MRBench dimension (each
    a check). An endpoint or judge failure is that dialogue's ERROR, never a FAIL."""
    limit = asyncio.Semaphore(concurrency)

    async def one(d: Dialogue) -> CaseResult:
        prompt = d.messages[-1]["content"]
        async with limit:
            started = time.monotonic()
            try:
                reply = await endpoint.complete(
                    [{"role": "system", "content": SUITE_SYSTEM}, *d.messages])
            except ModelCallError as exc:
                attempt = Attempt(error=f"the endpoint failed: {exc}")
                return CaseResult(id=d.id, file="mrbench", prompt=prompt,
                                  status=classify([attempt]), attempts=[attempt])
            answer = reply.content or ""
            latency = int((time.monotonic() - started) * 1000)
            checks = [await _dimension(d, answer, dim, judge_model, decides)
                      for dim in DIMENSIONS]
        turns = [Turn.model_validate(m) for m in [*d.messages, {"role": "assistant",
                                                                "content": answer}]]
        attempt = Attempt(transcript=Transcript(answer=answer, turns=turns), checks=checks,
                          latency_ms=latency)
        return CaseResult(id=d.id, file="mrbench", prompt=prompt, status=classify([attempt]),
                          attempts=[attempt])

    return list(await asyncio.gather(*(one(d) for d in dialogues)))


async def _dimension(d: Dialogue, answer: str, dim: Dimension, model: ChatModel,
                     decides: bool) -> CheckResult:
    item = JudgeInput(
        rubric=dim.rubric, must_not=dim.must_not, conversation=d.messages, reply=answer,
        tool_calls=[], pictures=[],
        reference={"setting": "a maths tutoring dialogue; the reply is the tutor's next turn",
                   "correct_solution": d.solution})
    meta = JudgeVerdict(model=model.model_id, prompt_hash=TUTORING.hash(),
                        trust="decides" if decides else "advisory")
    try:
        verdict = await judge(model, item, TUTORING)
    except (UnreadableVerdict, ModelCallError) as exc:
        return CheckResult(kind=f"mrbench:{dim.name}", passed=False, error=True,
                           reason=str(exc), judge=meta)
    return CheckResult(kind=f"mrbench:{dim.name}", passed=verdict.passed,
                       reason=verdict.reason, decided=decides,
                       judge=meta.model_copy(update={
                           "verdict": "pass" if verdict.passed else "fail"}))
