"""Frozen tool responses, as a case or a scenario writes them (`tool_responses:`), and their one
validation, which both loaders use:

    tool_responses:
      read_page:
        contract: 575308e42ea7     # the tool's contract when the responses were written
        responses: [{url: "https://…", text: "…"}, {error: "timed out"}]
        exhausted: error           # or repeat_last

`response:` is one answer for every call; `responses:` a sequence, answered in order. A
response fits the tool's result model, or is `{error: text}` (the tool's error). A key the
result schema does not name is refused (the tool would never answer it, so the model would be
tested on an answer it cannot get), and so is a NUL or other control character in any text
(YAML's "\0" escape writes one past the file reader's check).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from app.capabilities import REGISTRY, Tool
from evals.load.context import Context, offered_tools

# What no frozen text may hold: the control characters the YAML reader refuses in a file.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ToolResponses(BaseModel):
    """What a tool answers instead of running: one response, or a sequence, written against
    the tool's contract (its hash at the time)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    contract: str = Field(pattern=r"^[0-9a-f]{12}$")
    response: dict[str, JsonValue] | None = None
    responses: tuple[dict[str, JsonValue], ...] = ()
    exhausted: Literal["error", "repeat_last"] = "error"

    @model_validator(mode="after")
    def _one(self) -> ToolResponses:
        if (self.response is None) == (not self.responses):
            raise ValueError("give either response: (static) or responses: (a sequence)")
        return self

    @property
    def sequence(self) -> list[dict[str, JsonValue]]:
        return [self.response] if self.response is not None else list(self.responses)


def response_errors(frozen: Mapping[str, ToolResponses], context: Context
                    ) -> list[tuple[tuple[Any, ...], str]]:
    """Each problem with an item's frozen responses, as (where under the item, message): an
    unknown tool, a tool never offered to the item's audience on its page, a contract that
    changed since the responses were written, a response that does not fit the result
    model."""
    errors: list[tuple[tuple[Any, ...], str]] = []
    tools = REGISTRY.all_tools()
    offered = offered_tools(context)
    for name, responses in frozen.items():
        where = ("tool_responses", name)
        tool = tools.get(name)
        if tool is None:
            errors.append((where, f"tool_responses: unknown tool {name!r}"))
        elif name not in offered:
            who = context.as_ or "anonymous visitor"
            errors.append((where, f"tool_responses: {name!r} is never offered to {who} on"
                                  f" {context.page_path} (offered:"
                                  f" {', '.join(sorted(offered)) or 'no tool'})"))
        else:
            errors += [((*where, *loc), message) for loc, message in _fit(tool, responses)]
    return errors


def _fit(tool: Tool, frozen: ToolResponses) -> list[tuple[tuple[Any, ...], str]]:
    """A frozen response must fit today's contract of its tool: the hash recorded with it, and
    the tool's result schema (or be an error)."""
    if frozen.contract != tool.contract():
        return [(("contract",),
                 f"{tool.name}: its contract changed since these responses were written (was"
                 f" {frozen.contract}, now {tool.contract()}); check them against the tool's"
                 f" arguments and result, then record contract: {tool.contract()}")]
    errors: list[tuple[tuple[Any, ...], str]] = []
    assert tool.result is not None
    schema = tool.result.model_json_schema()
    for n, response in enumerate(frozen.sequence, start=1):
        loc = ("response",) if frozen.response is not None else ("responses", n - 1)
        control = _control_at(response)
        if control is not None:
            path, char = control
            errors.append(((*loc, *path), f"{tool.name} response {n}:"
                                          f" {'.'.join(map(str, path)) or '(response)'}: text"
                                          f" holds the control character {char!r}"))
            continue
        if set(response) == {"error"}:
            continue
        try:
            tool.result.model_validate(response)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(response)"
            errors.append((loc, f"{tool.name} response {n} does not fit the result schema:"
                                f" {where}: {first['msg']}"))
            continue
        for path in _unknown_keys(response, schema, schema.get("$defs", {}), ()):
            known = sorted(_properties(_resolve(schema, schema.get("$defs", {})), path[:-1],
                                       response, schema.get("$defs", {})))
            errors.append(((*loc, *path), f"{tool.name} response {n}:"
                                          f" {'.'.join(map(str, path))}: not a field of the"
                                          " tool's result (fields:"
                                          f" {', '.join(known) or 'none'})"))
    return errors


def _control_at(value: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], str] | None:
    """Where a control character first appears in a value's keys or text, and which."""
    if isinstance(value, str):
        found = _CONTROL.search(value)
        return (path, found.group()) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            hit = _control_at(key, (*path, key)) or _control_at(item, (*path, key))
            if hit:
                return hit
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            hit = _control_at(item, (*path, i))
            if hit:
                return hit
    return None


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _unknown_keys(value: Any, schema: dict[str, Any], defs: dict[str, Any],
                  path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The paths of the keys in `value` its JSON schema does not name (an object that takes
    any key, `additionalProperties`, takes them all)."""
    schema = _resolve(schema, defs)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        # Only the options of the value's own kind: `D | None` with a mapping is read as D (the
        # null option names no key, and would hide a typo inside D).
        fitting = [o for o in options if _of_kind(value, _resolve(o, defs))] or options
        found = [_unknown_keys(value, option, defs, path) for option in fitting]
        return min(found, key=len)
    if isinstance(value, dict) and ("properties" in schema or schema.get("type") == "object"):
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        unknown: list[tuple[Any, ...]] = []
        for key, item in value.items():
            if key in props:
                unknown += _unknown_keys(item, props[key], defs, (*path, key))
            elif isinstance(extra, dict):
                unknown += _unknown_keys(item, extra, defs, (*path, key))
            elif extra is not True:
                unknown.append((*path, key))
        return unknown
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [p for i, item in enumerate(value)
                for p in _unknown_keys(item, schema["items"], defs, (*path, i))]
    return []


def _of_kind(value: Any, schema: dict[str, Any]) -> bool:
    """Whether a schema option can take the value's kind at all (a mapping, a list, other)."""
    if "anyOf" in schema or "oneOf" in schema or not schema:
        return True
    kind = schema.get("type")
    if isinstance(value, dict):
        return "properties" in schema or kind == "object"
    if isinstance(value, list):
        return "items" in schema or kind == "array"
    return kind not in ("object", "array") and "properties" not in schema


def _properties(schema: dict[str, Any], path: tuple[Any, ...], value: Any,
                defs: dict[str, Any]) -> set[str]:
    """The field names the schema allows at `path` (for the error message)."""
    for step in path:
        schema = _resolve(schema, defs)
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            schema = next((_resolve(o, defs) for o in options
                           if "properties" in _resolve(o, defs) or "items" in _resolve(o, defs)),
                          {})
        if isinstance(step, int):
            schema, value = schema.get("items", {}), value[step]
        else:
            schema, value = schema.get("properties", {}).get(step, {}), value[step]
    schema = _resolve(schema, defs)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        schema = next((_resolve(o, defs) for o in options if "properties" in _resolve(o, defs)),
                      {})
    return set(schema.get("properties", {}))
