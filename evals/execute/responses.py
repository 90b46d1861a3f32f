"""Frozen tool responses: in a scenario, a tool with responses answers from them in order
(`exhausted: error` raises once they run out, `repeat_last` repeats the last); a live-network
tool without any answers an error, never the network. Everything else runs for real."""

from __future__ import annotations

from typing import Any

from app.capabilities import Tool, ToolContext, ToolError
from evals.load.scenarios import ToolResponses


def frozen_tools(tools: list[Tool], responses: dict[str, ToolResponses]) -> list[Tool]:
    """Tools with frozen responses answer from them, in order; a live-network tool without
    any answers an error. Everything else runs for real."""
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

    async def offline(ctx: ToolContext, args: Any) -> Any:
        raise ToolError("the web cannot be read in this test")

    out = []
    for t in tools:
        if t.name in responses:
            out.append(t.with_run(responder(t.name, responses[t.name])))
        elif t.kind == "live_read":
            out.append(t.with_run(offline))
        else:
            out.append(t)
    return out
