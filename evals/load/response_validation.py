"""The one validation of frozen tool responses (evals/load/responses.py), which the case and the
scenario loaders share. Each problem is (where under the item, message), for the loader's
`file:line`; a branch's problems name it (`search_catalog branch 2 response 1 …`).

Against today's tool: its contract (the hash recorded with the responses), its argument model (a
branch's selectors and every expression name its arguments) and its result model (every response
of the default and of every branch, each member of every sequence). A response with expressions is
rendered with sample arguments of the right types, and with its optional arguments left out, and
must fit both ways. A key the result schema does not name is refused (the tool would never answer
it, so the model would be tested on an answer it cannot get), and so is a NUL or other control
character in any text (YAML's "\\0" escape writes one past the file reader's check). States are
the item's `response_state:` names; `on_confirm` needs an action tool and an item that confirms.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.capabilities import REGISTRY, Tool
from app.text import CONTROL, control_named, found_in
from evals.checks.selectors import fields_of, selector_errors
from evals.load.context import Context, offered_tools
from evals.load.expressions import (
    ExpressionError,
    expressions,
    has_expressions,
    render,
    sample_arguments,
)
from evals.load.responses import Answers, Branch, Response, ResponseState, ToolResponses

Problem = tuple[tuple[Any, ...], str]


def response_errors(frozen: Mapping[str, ToolResponses], context: Context,
                    state: ResponseState | None = None, *, confirms: bool = False
                    ) -> list[Problem]:
    """Each problem with an item's frozen responses: an unknown tool, a tool never offered to
    the item's audience on its page, a contract that changed since the responses were written,
    and each problem of a branch or response (see the module). `confirms`: whether the item
    confirms cards (a scenario with `confirm: true`), which `on_confirm` needs."""
    errors: list[Problem] = []
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
            errors += [((*where, *loc), message)
                       for loc, message in _fit(tool, responses, state, confirms)]
    return errors


def result_errors(tool: Tool, response: Response) -> list[str]:
    """What keeps one response from being a result of today's `tool` (its result schema, its
    arguments for the expressions in it), as messages; empty when it fits. The check every
    frozen response gets at load, for one response on its own (the workspace's examples)."""
    return [message for _, message in _response_errors(tool, response, (), "response")]


def _fit(tool: Tool, frozen: ToolResponses, state: ResponseState | None, confirms: bool
         ) -> list[Problem]:
    """Frozen responses must fit today's contract of their tool: the hash recorded with them,
    then its arguments and result, in the default and in every branch."""
    if frozen.contract != tool.contract():
        return [(("contract",),
                 f"{tool.name}: its contract changed since these responses were written (was"
                 f" {frozen.contract}, now {tool.contract()}); check them against the tool's"
                 f" arguments and result, then record contract: {tool.contract()}")]
    errors: list[Problem] = [
        ((key,), f"{tool.name}: {key}: belongs to the default response: or responses:, and"
                 " there is none (set it in a branch)") for key in frozen.orphans()]
    units: list[tuple[tuple[Any, ...], str, Answers]] = []
    if frozen.answers():
        units.append(((), tool.name, frozen))
    units += [(("branches", i), f"{tool.name} branch {i + 1}", branch)
              for i, branch in enumerate(frozen.branches)]
    for loc, label, answers in units:
        errors += _answers_errors(tool, answers, loc, label, state, confirms)
    return errors


def _answers_errors(tool: Tool, answers: Answers, loc: tuple[Any, ...], label: str,
                    state: ResponseState | None, confirms: bool) -> list[Problem]:
    errors: list[Problem] = []
    named = answers.states()
    if isinstance(answers, Branch):
        for key, message in selector_errors(answers.arguments, fields_of(tool.args),
                                            f"{label} arguments"):
            errors.append(((*loc, "arguments", key), message))
        if answers.state is not None:
            named = {"state": answers.state, **named}
    for key, name in named.items():
        if state is None:
            errors.append(((*loc, key), f"{label}: {key}: {name!r}: the item declares no states"
                                        " (response_state: {states: [...], initial: ...})"))
        elif name not in state.states:
            errors.append(((*loc, key), f"{label}: {key}: unknown state {name!r} (states:"
                                        f" {', '.join(state.states)})"))
    if answers.on_confirm is not None:
        if tool.kind != "action":
            errors.append(((*loc, "on_confirm"), f"{label}: on_confirm: {tool.name} is not an"
                                                 " action tool, so no card of it is confirmed"
                                                 " (set_state moves the state when it answers)"))
        elif not confirms:
            errors.append(((*loc, "on_confirm"), f"{label}: on_confirm: no card is confirmed"
                                                 " here (a scenario with confirm: true confirms"
                                                 " them; a case never does)"))
    for n, response in enumerate(answers.sequence, start=1):
        where = (*loc, "response") if answers.response is not None else (*loc, "responses",
                                                                           n - 1)
        errors += _response_errors(tool, response, where, f"{label} response {n}")
    return errors


def _response_errors(tool: Tool, response: Response, loc: tuple[Any, ...], label: str
                     ) -> list[Problem]:
    """One response: no control character, expressions that parse and name arguments, and a
    fit to the result schema (rendered, when it has expressions)."""
    control = found_in(response, CONTROL)
    if control is not None:
        path, char = control
        return [((*loc, *path), f"{label}: {'.'.join(map(str, path)) or '(response)'}: text"
                                f" holds the {control_named(char)}")]
    errors: list[Problem] = []
    arguments = sorted(fields_of(tool.args))
    for path, found in expressions(response):
        shown = ".".join(map(str, path))
        if isinstance(found, ExpressionError):
            errors.append(((*loc, *path), f"{label}: {shown}: {found}"))
        elif found.field not in arguments:
            errors.append(((*loc, *path), f"{label}: {shown}: args.{found.field}: {tool.name}"
                                          f" has no argument {found.field!r} (arguments:"
                                          f" {', '.join(arguments) or 'none'})"))
    if errors or set(response) == {"error"}:
        return errors
    schema = tool.result_schema()
    assert tool.result is not None and schema is not None
    defs = schema.get("$defs", {})
    rendered = has_expressions(response)
    for arguments_given in sample_arguments(tool.args) if rendered else [{}]:
        value = render(response, arguments_given) if rendered else response
        # Which sample the response was rendered with, when that is what made it not fit.
        given = (f" with the arguments {json.dumps(arguments_given, ensure_ascii=False)}"
                 if rendered else "")
        try:
            tool.result.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(response)"
            return [(loc, f"{label} does not fit the result schema{given}: {where}:"
                          f" {first['msg']}")]
        for path in _unknown_keys(value, schema, defs, ()):
            known = sorted(_properties(_resolve(schema, defs), path[:-1], value, defs))
            errors.append(((*loc, *path), f"{label}: {'.'.join(map(str, path))}: not a field"
                                          " of the tool's result (fields:"
                                          f" {', '.join(known) or 'none'})"))
        if errors:
            return errors
    return errors


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
