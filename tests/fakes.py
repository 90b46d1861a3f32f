"""A scripted fake model: the only kind of model the offline tests ever call."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.chat.declared import Declared
from app.chat.models import ModelCallError
from app.chat.reply import ModelReply, ToolCallRequest, Usage

Step = ModelReply | Exception | Callable[[list[dict[str, Any]], list[dict[str, Any]] | None],
                                         ModelReply]


def say(text: str, tokens: tuple[int, int] = (10, 5)) -> ModelReply:
    return ModelReply(content=text, usage=Usage(*tokens))


def call(name: str, _id: str | None = None, **arguments: Any) -> ModelReply:
    return ModelReply(
        content=None,
        tool_calls=[ToolCallRequest(_id or f"call_{name}", name, json.dumps(arguments))],
        usage=Usage(10, 5),
    )


class ScriptedModel(Declared):
    """Replays a script of replies; records every request it was sent."""

    def __init__(self, *steps: Step, model_id: str = "scripted/fake", repeat: bool = False):
        self.model_id = model_id
        self.steps = list(steps)
        self.repeat = repeat
        self.requests: list[dict[str, Any]] = []

    async def complete(self, messages, tools=None, *, temperature=None, tool_choice=None,
                       response_format=None):
        self.requests.append({"messages": [dict(m) for m in messages], "tools": tools,
                              "temperature": temperature, "tool_choice": tool_choice,
                              "response_format": response_format})
        if not self.steps:
            raise ModelCallError("script exhausted")
        step = self.steps[0] if self.repeat else self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if callable(step) and not isinstance(step, ModelReply):
            return step(messages, tools)
        return step
