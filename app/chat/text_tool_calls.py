"""Tool calls written as text, turned into real tool calls (the local provider only).

Small local models asked for a tool in "auto" mode write the call as JSON in their content:
bare, fenced (```json), or wrapped in <tool_call>/<tools> tags, one or several. The adapter
turns such content into structured calls so the app's loop and the evals see the same shape
as with a hosted model. Content that is not a well-formed call stays a plain answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.chat.reply import ModelReply, ToolCallRequest

_FENCE = re.compile(r"```(?:json|tool_call|tool)?\s*(.*?)```", re.DOTALL)
_TAG = re.compile(r"<(tool_call|tools|function_call)>\s*(.*?)\s*</\1>", re.DOTALL)


def _candidates(content: str) -> list[str]:
    tagged = [m.group(2) for m in _TAG.finditer(content)]
    if tagged:
        return tagged
    fenced = [m.group(1) for m in _FENCE.finditer(content)]
    if fenced:
        return fenced
    return [content]


def _objects(text: str) -> list[Any]:
    """Every JSON value in a text: one document, or several side by side (one per line)."""
    text = text.strip()
    decoder = json.JSONDecoder()
    out, pos = [], 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return []
        out.append(value)
        pos = end
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
    return out


def _as_call(value: Any, known: set[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(value, dict):
        return None
    if "function" in value and isinstance(value["function"], dict):
        value = value["function"]
    name = value.get("name")
    args = value.get("arguments", value.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or name not in known or not isinstance(args, dict):
        return None
    return name, args


def calls_from_content(content: str | None, known: set[str]) -> list[ToolCallRequest] | None:
    """The tool calls a text spells out, or None when it is not (only) tool calls."""
    if not content or not known:
        return None
    if "{{" in content and "}}" in content:
        # Seen from the 1.5B model: calls written with doubled braces, {{"name": …}}.
        undoubled = calls_from_content(content.replace("{{", "{").replace("}}", "}"), known)
        if undoubled is not None:
            return undoubled
    calls: list[ToolCallRequest] = []
    for chunk in _candidates(content):
        values = _objects(chunk)
        if not values:
            return None
        for value in values if not isinstance(values[0], list) else values[0]:
            call = _as_call(value, known)
            if call is None:
                return None
            calls.append(ToolCallRequest(f"call_{len(calls)}", call[0], json.dumps(call[1])))
    # Prose around a fenced call is fine; prose that is itself the answer is not a call.
    leftover = _TAG.sub("", _FENCE.sub("", content)).strip() if _FENCE.search(content) or \
        _TAG.search(content) else ""
    if leftover and len(leftover) > 200:
        return None
    return calls or None


def adapt(reply: ModelReply, tools: list[dict[str, Any]] | None) -> ModelReply:
    """A reply whose content is tool calls becomes a reply with those tool calls."""
    if reply.tool_calls or not tools:
        return reply
    known = {t["function"]["name"] for t in tools}
    calls = calls_from_content(reply.content, known)
    if calls is None:
        return reply
    # The provider's finish reason is kept as it gave it ("stop": the calls were text).
    return ModelReply(content=None, tool_calls=calls, usage=reply.usage,
                      finish_reason=reply.finish_reason)
