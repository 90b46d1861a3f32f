"""The makerspace calibration set: replies the team wrote to this suite's judged cases, each
with the verdict a careful member of lab staff gives (evals/calibration/makerspace.yaml).

`python -m evals calibrate --set makerspace` has the judge rate every reply with its case's
rubric and must_not, through the same judge prompt the runner uses, and compares. The labels
were given under each case's own rubric, so the set measures that prompt only: an evaluator
pack's prompt is never rated on it (its labels say nothing of the pack's rubric); a pack earns
trust from labels given under its own rubric (evals/calibration/labels.py).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.calibrate import CalibrationError, Rated
from evals.fixtures.catalog import fixtures_for
from evals.judge import MAKERSPACE, JudgeInput, UnreadableVerdict, judge
from evals.load.cases import Case, CaseFileError
from evals.load.yamlfile import line_of, read_yaml

MAKERSPACE_SET = Path(__file__).parent / "makerspace.yaml"


class LabelledReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    case: str
    reply: str
    label: Literal["pass", "fail"]
    why: str = ""


@dataclass(frozen=True)
class Item:
    reply: LabelledReply
    case: Case


def load_set(cases: list[Case], path: Path = MAKERSPACE_SET) -> list[Item]:
    """Every labelled reply with its judged case; errors name file:line."""
    by_id = {c.id: c for c in cases}
    try:
        data, lines = read_yaml(path)
    except (CaseFileError, OSError) as exc:
        raise CalibrationError(str(exc)) from exc
    if not isinstance(data, list):
        raise CalibrationError(f"{path.name}:1: a list of labelled replies")
    items, errors, seen = [], [], set()
    for i, raw in enumerate(data):
        where = f"{path.name}:{line_of((i,), lines)}"
        try:
            reply = LabelledReply.model_validate(raw)
        except ValidationError as exc:
            e = exc.errors()[0]
            errors.append(f"{where}: {'.'.join(map(str, e['loc']))}: {e['msg']}")
            continue
        case = by_id.get(reply.case)
        if case is None or not case.judged:
            errors.append(f"{where}: {reply.case!r} is not a judged case in the case files")
        elif reply.id in seen:
            errors.append(f"{where}: duplicate id {reply.id!r}")
        else:
            seen.add(reply.id)
            items.append(Item(reply, case))
    if errors:
        raise CalibrationError("\n".join(errors))
    return items


def judge_input(item: Item) -> JudgeInput:
    """What the runner would send the judge had the assistant given this reply: the case's
    own rubric and must_not, the ones its label was given under."""
    ctx = item.case.context
    conversation = item.case.history_messages()
    conversation.append({"role": "user", "content": item.case.prompt})
    return JudgeInput(
        rubric=item.case.rubric, must_not=item.case.must_not, conversation=conversation,
        reply=item.reply.reply, tool_calls=[],
        reference={"page": ctx.page_path, "asking_as": ctx.as_ or "anonymous visitor",
                   "catalogue": sorted(fixtures_for(ctx.catalog).slugs), "qr_codes": []},
        pictures=list(item.case.photos))


async def rate(items: list[Item], model: ChatModel, concurrency: int = 2, *,
               strict: bool = False
               ) -> tuple[list[Rated], dict[str, str]]:
    """The judge's verdict on every labelled reply, and the labels. A reply the judge could
    not rate is left out; `strict`: a failed model call stops the rating and is raised (the
    judge is broken, not this reply), the calls still in flight cancelled."""
    limit = asyncio.Semaphore(concurrency)

    async def one(item: Item) -> Rated:
        async with limit:
            try:
                v = await judge(model, judge_input(item), MAKERSPACE)
            except UnreadableVerdict as exc:
                return Rated(item.reply.id, None, str(exc))
            except ModelCallError as exc:
                if strict:
                    raise
                return Rated(item.reply.id, None, str(exc))
        return Rated(item.reply.id, "pass" if v.passed else "fail", v.reason)

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(i)) for i in items]
    except* ModelCallError as failed:
        raise failed.exceptions[0] from None
    return [t.result() for t in tasks], {i.reply.id: i.reply.label for i in items}
