"""Frozen tool responses: a tool with responses (a case's or a scenario's `tool_responses`)
answers from them in order (`exhausted: error` raises once they run out, `repeat_last` repeats
the last). What the other tools do is each executor's: in a scenario a live-network tool
without any answers an error, never the network, and everything else runs for real; in a case
they stay the stubs the composition made (evals/execute/stubs.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.capabilities import Tool, ToolContext, ToolError
from evals.load.responses import ToolResponses


def answering(tools: list[Tool], responses: Mapping[str, ToolResponses]) -> list[Tool]:
    """Tools with frozen responses answer from them, in order, counted across every turn these
    tools serve; the others are left as they are."""
    used: dict[str, int] = {}

    def responder(name: str, frozen: ToolResponses) -> Any:
        async def run(ctx: ToolContext, args: Any) -> Any:
            n = used.get(name, 0)
            used[name] = n + 1
            sequence = frozen.sequence
            if n >= len(sequence) and frozen.exhausted == "error":
                raise ToolError(f"{name} has no further response in this test")
            answer = sequence[min(n, len(sequence) - 1)]
            if set(answer) == {"error"}:
                raise ToolError(str(answer["error"]))
            return answer
        return run

    return [t.with_run(responder(t.name, responses[t.name])) if t.name in responses else t
            for t in tools]


async def _offline(ctx: ToolContext, args: Any) -> Any:
    raise ToolError("the web cannot be read in this test")


def frozen_tools(tools: list[Tool], responses: Mapping[str, ToolResponses]) -> list[Tool]:
    """A scenario's tools: those with frozen responses answer from them, in order; a
    live-network tool without any answers an error. Everything else runs for real."""
    return [t.with_run(_offline) if t.kind == "live_read" and t.name not in responses else t
            for t in answering(tools, responses)]
