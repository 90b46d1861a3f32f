"""Assertions on the recorded tool calls. A call counts as made only when its arguments
validated and it ran (outcome ok); `not_called_tool` counts every attempt at a call.

Each may narrow the calls it counts with selectors on their `arguments:` and `result:`, in the
language scenarios use (evals/checks/selectors.py), checked against the tool's argument and
result models when the case loads."""

from __future__ import annotations

from typing import Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from app.capabilities import REGISTRY
from evals.checks._registry import Args, Verdict, assertion
from evals.checks.selectors import (
    Selectors,
    call_misses,
    fields_of,
    fitting,
    selector_errors,
    tool_names,
)
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import ToolCall, Transcript


class ToolArg(Args):
    """A model tool by name, and optional selectors on its calls' arguments and result."""

    value: str = Field(json_schema_extra=tool_names())
    arguments: Selectors = {}
    result: Selectors = {}

    @field_validator("value")
    @classmethod
    def _registered(cls, v: str) -> str:
        tools = REGISTRY.all_tools()
        if v not in tools:
            raise ValueError(f"unknown tool {v!r}; registered tools: {', '.join(sorted(tools))}")
        return v

    @field_validator("arguments", "result")
    @classmethod
    def _selectors(cls, v: Selectors, info: ValidationInfo) -> Selectors:
        tool = REGISTRY.all_tools().get(info.data.get("value", ""))
        if tool is None:  # the value's own error says so
            return v
        model = tool.args if info.field_name == "arguments" else tool.result
        assert model is not None
        errors = selector_errors(v, fields_of(model), f"{tool.name} {info.field_name}")
        if errors:
            raise ValueError("; ".join(message for _, message in errors))
        return v

    @model_serializer(mode="wrap")
    def _without_empty_selectors(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A check without selectors is written, labelled and fingerprinted as it was before
        # selectors existed.
        data = handler(self)
        return {k: v for k, v in data.items() if not (k in ("arguments", "result") and not v)}

    @property
    def selected(self) -> str:
        """The selectors as the reasons show them ('' when there are none)."""
        parts = [f"{name} {sel}" for name, sel in (("arguments", self.arguments),
                                                    ("result", self.result)) if sel]
        return f" with {' and '.join(parts)}" if parts else ""

    def fitting(self, calls: list[ToolCall]) -> list[ToolCall]:
        return fitting(calls, self.arguments, self.result)

    def why_not(self, calls: list[ToolCall]) -> str:
        """Why the last of these calls does not fit the selectors."""
        return "; ".join(call_misses(calls[-1], self.arguments, self.result))


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


@assertion("called_tool", args=ToolArg, reads_answer=False, names_tool=True,
           needs=frozenset({"tool_calls"}))
def called_tool(turn: Transcript, args: ToolArg, fixtures: Fixtures) -> Verdict:
    ran = turn.ran(args.value)
    if args.fitting(ran):
        return True, f"called {args.value}{args.selected}"
    if ran:
        return False, (f"{args.value} ran {len(ran)} time(s), none fits: "
                       f"{args.why_not(ran)}")
    return False, f"no call of {args.value} ran; calls: {_called(turn)}"


@assertion("not_called_tool", args=ToolArg, reads_answer=False, names_tool=True,
           needs=frozenset({"tool_calls"}))
def not_called_tool(turn: Transcript, args: ToolArg, fixtures: Fixtures) -> Verdict:
    calls = args.fitting(turn.calls(args.value))
    if calls:
        return False, (f"called {args.value} with {calls[0].arguments}"
                       f" ({calls[0].status})")
    return True, f"did not call {args.value}{args.selected}"


@assertion("proposed_action", args=ActionArg, reads_answer=False, names_tool=True,
           needs=frozenset({"tool_calls"}))
def proposed_action(turn: Transcript, args: ActionArg, fixtures: Fixtures) -> Verdict:
    proposing = [c for c in turn.ran(args.value) if c.result_map.get("proposed") is True]
    proposed = args.fitting(proposing)
    if proposed:
        return True, f"proposed {args.value} with {proposed[0].arguments}"
    if proposing:
        return False, (f"{args.value} proposed {len(proposing)} time(s), none fits: "
                       f"{args.why_not(proposing)}")
    return False, f"did not propose {args.value}; calls: {_called(turn)}"
