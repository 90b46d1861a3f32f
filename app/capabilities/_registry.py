"""The capability registry: the single list of what the assistant can do, and for whom.

`compose_chat`, `/api/chat`, the evals' stubbing and the case loader all read it. Entries are
validated when they are registered, so a typo fails at import, not halfway through a run.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel

from app.capabilities._context import PromptContext, ToolContext
from app.identity import AUDIENCES, audience_of

ToolKind = Literal["read", "write", "action", "live_read"]
TOOL_KINDS: tuple[ToolKind, ...] = ("read", "write", "action", "live_read")
EVERYONE = frozenset(AUDIENCES)
SIGNED_IN = frozenset({"student", "staff", "super_admin"})
STAFF = frozenset({"staff", "super_admin"})
SUPER_ADMIN = frozenset({"super_admin"})

_NAME = re.compile(r"^[a-z][a-z0-9_]{1,63}$")

RunFn = Callable[[ToolContext, Any], Awaitable[Any]]
ApplyFn = Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]
PromptFn = Callable[[PromptContext], str]
WhenFn = Callable[[PromptContext], bool]


@cache
def _parameters(args: type[BaseModel]) -> dict[str, Any]:
    # Generating a JSON schema costs about a millisecond per model: done once per class.
    params = args.model_json_schema()
    params.pop("title", None)
    return params


@cache
def _result_schema(result: type[BaseModel]) -> dict[str, Any]:
    """A result model's schema as its contract hashes it: without the examples a model declares
    (`json_schema_extra`), which document the tool and change nothing it answers."""
    schema = dict(_parameters(result))
    schema.pop("examples", None)
    if "$defs" in schema:
        schema["$defs"] = {name: {k: v for k, v in spec.items() if k != "examples"}
                           for name, spec in schema["$defs"].items()}
    return schema


def result_examples(result: type[BaseModel]) -> list[dict[str, Any]]:
    """The example results a result model declares (`json_schema_extra={"examples": [...]}`)."""
    examples = _parameters(result).get("examples", [])
    return [e for e in examples if isinstance(e, dict)]


class RegistryError(ValueError):
    """A capability or tool that cannot be registered as written."""


class ToolError(Exception):
    """An error a tool reports to the model as its result; the turn goes on."""


@dataclass(frozen=True)
class Tool:
    """A tool the model can call. For an action, `run` only proposes and `apply` changes."""

    name: str
    description: str
    args: type[BaseModel]
    kind: ToolKind
    run: RunFn
    apply: ApplyFn | None = None
    # A schema frozen from an earlier version (the evals' comparison points): sent instead of
    # the one generated from `args`, which still validates the call.
    parameters: dict[str, Any] | None = None
    # What a successful call returns (an error is {"error": text}): frozen responses in eval
    # scenarios are validated against it.
    result: type[BaseModel] | None = None

    def contract(self) -> str:
        """A hash of the tool's name, argument schema and result schema: a scenario records
        it, so a frozen response written for another contract is reported, not used."""
        body = json.dumps({"name": self.name, "arguments": _parameters(self.args),
                           "result": _result_schema(self.result) if self.result else None},
                          sort_keys=True)
        return hashlib.sha256(body.encode()).hexdigest()[:12]

    def result_schema(self) -> dict[str, Any] | None:
        """The JSON schema of what a successful call returns (None without a result model),
        made once per model: frozen responses are checked against it, never changing it."""
        return _parameters(self.result) if self.result else None

    def examples(self) -> list[dict[str, Any]]:
        """The example results the tool's result model declares (none if it declares none)."""
        return result_examples(self.result) if self.result else []

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style function schema sent to the model."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description,
                         "parameters": self.parameters or _parameters(self.args)},
        }

    def with_run(self, run: RunFn) -> Tool:
        """The same tool (name, description, schema, kind) with another run function."""
        return replace(self, run=run)


@dataclass(frozen=True)
class Capability:
    name: str
    prompt: PromptFn
    tools: tuple[Tool, ...]
    audience: frozenset[str]
    when: WhenFn | None = None
    order: int = 100

    def applies(self, ctx: PromptContext) -> bool:
        if audience_of(ctx.identity) not in self.audience:
            return False
        return self.when is None or self.when(ctx)


@dataclass
class Registry:
    capabilities: dict[str, Capability] = field(default_factory=dict)

    def add(self, cap: Capability) -> None:
        _validate_capability(cap)
        if cap.name in self.capabilities:
            raise RegistryError(f"capability {cap.name!r} is registered twice")
        taken = {t.name: c.name for c in self.capabilities.values() for t in c.tools}
        for t in cap.tools:
            if t.name in taken:
                raise RegistryError(
                    f"tool {t.name!r} of capability {cap.name!r} already belongs to"
                    f" {taken[t.name]!r}"
                )
        self.capabilities[cap.name] = cap

    def ordered(self) -> list[Capability]:
        return sorted(self.capabilities.values(), key=lambda c: (c.order, c.name))

    def all_tools(self) -> dict[str, Tool]:
        return {t.name: t for c in self.ordered() for t in c.tools}

    def tool(self, name: str) -> Tool:
        tools = self.all_tools()
        if name not in tools:
            raise KeyError(f"no tool named {name!r}; known: {', '.join(sorted(tools))}")
        return tools[name]

    def for_context(self, ctx: PromptContext) -> list[Capability]:
        return [c for c in self.ordered() if c.applies(ctx)]


REGISTRY = Registry()


def _validate_tool(t: Tool) -> None:
    if not _NAME.match(t.name):
        raise RegistryError(f"tool name {t.name!r} must match {_NAME.pattern}")
    if not t.description.strip():
        raise RegistryError(f"tool {t.name!r} needs a description")
    if t.kind not in TOOL_KINDS:
        raise RegistryError(f"tool {t.name!r}: kind {t.kind!r} is not one of {TOOL_KINDS}")
    if not (isinstance(t.args, type) and issubclass(t.args, BaseModel)):
        raise RegistryError(f"tool {t.name!r}: args must be a pydantic model class")
    if not (isinstance(t.result, type) and issubclass(t.result, BaseModel)):
        raise RegistryError(f"tool {t.name!r}: result must be a pydantic model class")
    if not inspect.iscoroutinefunction(t.run):
        raise RegistryError(f"tool {t.name!r}: run must be an async function")
    if t.kind == "action":
        if t.apply is None or not inspect.iscoroutinefunction(t.apply):
            raise RegistryError(f"action tool {t.name!r} needs an async apply function")
    elif t.apply is not None:
        raise RegistryError(f"tool {t.name!r}: only action tools have an apply function")


def _validate_capability(cap: Capability) -> None:
    if not _NAME.match(cap.name):
        raise RegistryError(f"capability name {cap.name!r} must match {_NAME.pattern}")
    if not cap.audience or not cap.audience <= EVERYONE:
        raise RegistryError(
            f"capability {cap.name!r}: audience {sorted(cap.audience)} must be a non-empty "
            f"subset of {list(AUDIENCES)}"
        )
    if not callable(cap.prompt):
        raise RegistryError(f"capability {cap.name!r}: prompt must be callable")
    for t in cap.tools:
        _validate_tool(t)


def tool(
    *, kind: ToolKind, args: type[BaseModel], result: type[BaseModel], name: str | None = None,
    apply: ApplyFn | None = None,
) -> Callable[[RunFn], Tool]:
    """Make a Tool from an async function; its docstring is the model-facing description."""

    def wrap(fn: RunFn) -> Tool:
        t = Tool(
            name=name or fn.__name__,
            description=inspect.cleandoc(fn.__doc__ or ""),
            args=args,
            kind=kind,
            run=fn,
            apply=apply,
            result=result,
        )
        _validate_tool(t)
        return t

    return wrap


def capability(
    name: str,
    *,
    audience: Iterable[str],
    tools: Iterable[Tool] = (),
    when: WhenFn | None = None,
    order: int = 100,
    registry: Registry | None = None,
) -> Callable[[PromptFn], Capability]:
    """Register a capability whose prompt fragment is the decorated function."""

    def wrap(fn: PromptFn) -> Capability:
        cap = Capability(
            name=name, prompt=fn, tools=tuple(tools), audience=frozenset(audience),
            when=when, order=order,
        )
        (registry or REGISTRY).add(cap)
        return cap

    return wrap
