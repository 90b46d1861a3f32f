"""The tool-call loop: call the model, run the tools it asks for, until it answers."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import ValidationError

from app.capabilities import Tool, ToolContext, ToolError
from app.chat.compose import ComposedChat
from app.chat.models import ChatModel
from app.chat.reply import ModelReply, Usage
from app.text import SURROGATE, control_named, found_in, storable

STEP_LIMIT_NOTE = (
    "You have used every tool step this turn allows. Answer now from what you have, without"
    " calling tools."
)

log = logging.getLogger("app.chat")


# What each of execute_tool's error codes means for the call; no code: it ran.
OUTCOME_OF_ERROR = {"bad_json": "invalid_arguments", "bad_args": "invalid_arguments",
                    "unknown_tool": "unknown_tool", "tool_error": "error"}


def outcome_of(error: str | None) -> str:
    """ok, invalid_arguments, unknown_tool or error, from a call's error code."""
    return OUTCOME_OF_ERROR.get(error, "error") if error else "ok"


@dataclass
class ToolCallRecord:
    id: str
    name: str
    arguments: Any
    result: Any
    error: str | None = None
    kind: str | None = None

    @property
    def outcome(self) -> str:
        """ok, invalid_arguments, unknown_tool or error: whether the call really ran."""
        return outcome_of(self.error)


@dataclass
class TurnResult:
    answer: str
    tool_calls: list[ToolCallRecord]
    messages: list[dict[str, Any]]
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    steps: int = 0
    model: str = ""

    @property
    def proposals(self) -> list[dict[str, Any]]:
        """Confirmation cards: what action tools proposed this turn."""
        return [
            {"tool": c.name, **c.result}
            for c in self.tool_calls
            if c.kind == "action" and isinstance(c.result, dict) and c.result.get("proposed")
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "tool_calls": [{**asdict(c), "outcome": c.outcome} for c in self.tool_calls],
            "usage": asdict(self.usage),
            "latency_ms": self.latency_ms,
            "steps": self.steps,
            "model": self.model,
        }


async def execute_tool(tools: dict[str, Tool], call_id: str, name: str, raw_args: str,
                       ctx: ToolContext) -> ToolCallRecord:
    """Run one tool call. Every failure becomes the tool's result, for the model to read."""
    tool = tools.get(name)
    try:
        parsed_json = json.loads(raw_args or "{}")
    except json.JSONDecodeError as exc:
        return ToolCallRecord(call_id, name, storable(raw_args),
                              {"error": f"arguments are not JSON: {exc}"},
                              error="bad_json", kind=tool.kind if tool else None)
    if tool is None:  # a name no tool has, perhaps one that is not even text
        return ToolCallRecord(
            call_id, storable(name), storable(parsed_json),
            {"error": f"no tool named {name!r}; available: {', '.join(sorted(tools))}"},
            error="unknown_tool",
        )
    if hit := found_in(parsed_json, SURROGATE):
        # JSON can write half a UTF-16 pair ("\ud800"); no text holds one, so no tool is run
        # on it and the call is kept (and answered) without it.
        where = ".".join(str(p) for p in hit[0]) or "(root)"
        return ToolCallRecord(call_id, name, storable(parsed_json),
                              {"error": f"invalid arguments: {where}: holds the"
                                        f" {control_named(hit[1])}, which is not text"},
                              error="bad_args", kind=tool.kind)
    try:
        args = tool.args.model_validate(parsed_json)
    except ValidationError as exc:
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
        return ToolCallRecord(call_id, name, parsed_json,
                              {"error": f"invalid arguments: {detail}"}, error="bad_args",
                              kind=tool.kind)
    try:
        result = await tool.run(ctx, args)
    except ToolError as exc:
        return ToolCallRecord(call_id, name, parsed_json, {"error": str(exc)}, error="tool_error",
                              kind=tool.kind)
    except Exception as exc:  # a tool's own failure: the model is told, the turn goes on
        log.exception("tool %s failed", name)
        return ToolCallRecord(call_id, name, parsed_json,
                              {"error": f"{name} failed ({type(exc).__name__}); try another way"
                                        " or tell the person"}, error="tool_error",
                              kind=tool.kind)
    return ToolCallRecord(call_id, name, parsed_json, storable(result), kind=tool.kind)


def _as_text(arguments: str) -> str:
    """A tool call's arguments as the model is sent them back: JSON that writes half a UTF-16
    pair ("\\ud800"), which no text holds, written again without it."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return storable(arguments)  # answered as not JSON
    return json.dumps(storable(parsed)) if found_in(parsed, SURROGATE) else arguments


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
    if reply.tool_calls:
        msg["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": _as_text(c.arguments)}}
            for c in reply.tool_calls
        ]
    return msg


async def run_turn(
    model: ChatModel,
    composed: ComposedChat,
    conversation: list[dict[str, Any]],
    ctx: ToolContext,
    *,
    max_steps: int,
    on_tool_call: Callable[[ToolCallRecord], Awaitable[None]] | None = None,
) -> TurnResult:
    """Run one turn: `conversation` is the earlier turns plus this turn's user message."""
    started = time.perf_counter()
    tools = {t.name: t for t in composed.tools}
    schemas = composed.tool_schemas() or None
    messages: list[dict[str, Any]] = [*composed.system_messages(), *conversation]
    records: list[ToolCallRecord] = []
    usage = Usage()
    steps = 0
    while True:
        steps += 1
        final_step = steps > max_steps
        if final_step:
            messages.append({"role": "system", "content": STEP_LIMIT_NOTE})
        reply = await model.complete(messages, None if final_step else schemas)
        usage = usage + reply.usage
        if not reply.tool_calls or final_step:
            messages.append({"role": "assistant", "content": reply.content or ""})
            return TurnResult(
                answer=storable(reply.content or "").strip(),
                tool_calls=records,
                messages=messages,
                usage=usage,
                latency_ms=int((time.perf_counter() - started) * 1000),
                steps=steps,
                model=model.model_id,
            )
        messages.append(_assistant_message(reply))
        for call in reply.tool_calls:
            record = await execute_tool(tools, call.id, call.name, call.arguments, ctx)
            records.append(record)
            if on_tool_call is not None:
                await on_tool_call(record)
            messages.append({
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(record.result, default=str, ensure_ascii=False),
            })
