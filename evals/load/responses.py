"""Frozen tool responses, as a case or a scenario writes them (`tool_responses:`), and their one
validation, which both loaders use:

    tool_responses:
      read_page:
        contract: 575308e42ea7     # the tool's contract when the responses were written
        responses: [{url: "https://…", text: "…"}, {error: "timed out"}]
        exhausted: error           # or repeat_last

`response:` is one answer for every call; `responses:` a sequence, answered in order. A
response fits the tool's result model, or is `{error: text}` (the tool's error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from app.capabilities import REGISTRY, Tool
from evals.load.context import Context, offered_tools


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
    for n, response in enumerate(frozen.sequence, start=1):
        if set(response) == {"error"}:
            continue
        try:
            tool.result.model_validate(response)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(response)"
            loc = ("response",) if frozen.response is not None else ("responses", n - 1)
            errors.append((loc, f"{tool.name} response {n} does not fit the result schema:"
                                f" {where}: {first['msg']}"))
    return errors
