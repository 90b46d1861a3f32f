"""Assertions on the recorded tool calls."""

from __future__ import annotations

from pydantic import field_validator

from app.capabilities import REGISTRY
from evals.assertions._registry import Args, Verdict, assertion
from evals.record import Fixtures, RecordedTurn


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


def _called(turn: RecordedTurn) -> list[str]:
    return [c["name"] for c in turn.tool_calls]


@assertion("called_tool", args=ToolArg)
def called_tool(turn: RecordedTurn, args: ToolArg, fixtures: Fixtures) -> Verdict:
    if args.value in _called(turn):
        return True, f"called {args.value}"
    return False, f"never called {args.value}; called {_called(turn) or 'no tool'}"


@assertion("not_called_tool", args=ToolArg)
def not_called_tool(turn: RecordedTurn, args: ToolArg, fixtures: Fixtures) -> Verdict:
    calls = turn.calls(args.value)
    if calls:
        return False, f"called {args.value} with {calls[0]['arguments']}"
    return True, f"did not call {args.value}"


@assertion("proposed_action", args=ActionArg)
def proposed_action(turn: RecordedTurn, args: ActionArg, fixtures: Fixtures) -> Verdict:
    proposed = [c for c in turn.calls(args.value)
                if isinstance(c.get("result"), dict) and c["result"].get("proposed")]
    if proposed:
        return True, f"proposed {args.value} with {proposed[0]['arguments']}"
    return False, f"did not propose {args.value}; called {_called(turn) or 'no tool'}"
