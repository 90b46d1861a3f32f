"""Assertions on the recorded tool calls. A call counts as made only when its arguments
validated and it ran (outcome ok); `not_called_tool` counts every attempt at a call."""

from __future__ import annotations

from pydantic import field_validator

from app.capabilities import REGISTRY
from evals.checks._registry import Args, Verdict, assertion
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import Transcript


class ToolArg(Args):
    value: str

    @field_validator("value")
    @classmethod
    def _registered(cls, v: str) -> str:
        tools = REGISTRY.all_tools()
        if v not in tools:
            raise ValueError(f"unknown tool {v!r}; registered tools: {', '.join(sorted(tools))}")
        return v


class ActionArg(ToolArg):
    @field_validator("value")
    @classmethod
    def _is_action(cls, v: str) -> str:
        kind = REGISTRY.all_tools()[v].kind
        if kind != "action":
            actions = sorted(t for t, x in REGISTRY.all_tools().items() if x.kind == "action")
            raise ValueError(f"{v!r} is a {kind} tool, not an action; actions: {actions}")
        return v


def _called(turn: Transcript) -> str:
    shown = [c.name + ("" if c.status == "ok" else f" ({c.status})") for c in turn.tool_calls]
    return ", ".join(shown) or "no tool"


@assertion("called_tool", args=ToolArg, reads_answer=False)
def called_tool(turn: Transcript, args: ToolArg, fixtures: Fixtures) -> Verdict:
    if turn.ran(args.value):
        return True, f"called {args.value}"
    return False, f"no call of {args.value} ran; calls: {_called(turn)}"


@assertion("not_called_tool", args=ToolArg, reads_answer=False)
def not_called_tool(turn: Transcript, args: ToolArg, fixtures: Fixtures) -> Verdict:
    calls = turn.calls(args.value)
    if calls:
        return False, (f"called {args.value} with {calls[0].arguments}"
                       f" ({calls[0].status})")
    return True, f"did not call {args.value}"


@assertion("proposed_action", args=ActionArg, reads_answer=False)
def proposed_action(turn: Transcript, args: ActionArg, fixtures: Fixtures) -> Verdict:
    proposed = [c for c in turn.ran(args.value) if c.result_map.get("proposed") is True]
    if proposed:
        return True, f"proposed {args.value} with {proposed[0].arguments}"
    return False, f"did not propose {args.value}; calls: {_called(turn)}"
