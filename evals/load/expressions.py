"""Expressions over a tool call's arguments inside a frozen response's text: the response echoes
what it was asked for.

    text: "Build volume of {{ args.slug }}"           # inside text: the value as text
    ticket_id: "{{ args.ticket_id }}"                  # the whole string: the value itself (12)
    slug: "{{ args.slug | default('form-4') }}"        # when the argument is absent or empty

An expression names one argument of the tool (`args.FIELD`, a field of its argument model) and
may give a literal default (JSON text, a number, true/false/null, or 'single-quoted' text). That
is all it can do: no calls, no attributes, no arithmetic, so a frozen response can never run code.
A string that is one expression and nothing else keeps the argument's JSON type; inside other
text, text stays as it is, null becomes empty and other values are written as JSON. `{{` always
opens an expression: one that does not parse is refused at load, never left as text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, JsonValue
from pydantic_core import to_jsonable_python

from app.text import CONTROL, SURROGATE, control_named

# `{{ ... }}`, shortest first, so two expressions in one text are two.
_EXPRESSION = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_BODY = re.compile(r"\s*args\.([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*default\((.*)\)\s*)?",
                   re.DOTALL)
SYNTAX = "{{ args.FIELD }} or {{ args.FIELD | default(LITERAL) }}"
# Sample values by JSON type, for rendering an expression at load.
_SAMPLES: dict[str, JsonValue] = {"string": "sample", "integer": 1, "number": 1.5,
                                  "boolean": True, "array": [], "object": {}, "null": None}


@dataclass(frozen=True)
class Expression:
    """`args.FIELD`, with the literal that stands in when the argument is absent or empty."""

    field: str
    default: JsonValue = None
    has_default: bool = False

    def value(self, arguments: Mapping[str, Any]) -> Any:
        got = arguments.get(self.field)
        if got in (None, "") and self.has_default:
            return self.default
        return got


class ExpressionError(ValueError):
    """An expression that does not parse: the message says what was written."""


@functools.lru_cache(maxsize=1024)
def parse(body: str) -> Expression:
    """The expression between `{{` and `}}`."""
    found = _BODY.fullmatch(body)
    if found is None:
        raise ExpressionError(f"{{{{{body}}}}} is not an expression ({SYNTAX})")
    field, literal = found.group(1), found.group(2)
    if literal is None:
        return Expression(field)
    return Expression(field, _literal(literal.strip(), body), True)


def _literal(text: str, body: str) -> JsonValue:
    if len(text) >= 2 and text[0] == text[-1] == "'" and "'" not in text[1:-1]:
        return text[1:-1]
    try:
        # NaN and Infinity are no JSON a tool could answer; an integer past Python's 4,300
        # digits is a ValueError as JSON that is not valid.
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        value = ...
    if value is ... or isinstance(value, dict | list):
        raise ExpressionError(f"{{{{{body}}}}}: default({text}) is not a literal (text in"
                              " quotes, a number, true, false or null)")
    if isinstance(value, str) and (bad := CONTROL.search(value) or SURROGATE.search(value)):
        raise ExpressionError(f"{{{{{body}}}}}: default({text}) holds the"
                              f" {control_named(bad.group())}")
    return value  # type: ignore[no-any-return]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a literal")


def expressions(value: Any, path: tuple[Any, ...] = ()
                ) -> Iterator[tuple[tuple[Any, ...], Expression | ExpressionError]]:
    """Every expression in a value's text (keys are never expressions), with where it is; one
    that does not parse comes as its error."""
    if isinstance(value, str):
        for found in _EXPRESSION.finditer(value):
            try:
                yield path, parse(found.group(1))
            except ExpressionError as exc:
                yield path, exc
        if "{{" in _EXPRESSION.sub("", value):
            yield path, ExpressionError(f"{value!r}: '{{{{' opens no expression ({SYNTAX})")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from expressions(item, (*path, key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from expressions(item, (*path, i))


def has_expressions(value: Any) -> bool:
    return next(expressions(value), None) is not None


def render(value: Any, arguments: Mapping[str, Any]) -> Any:
    """The value with each expression replaced by the argument it names (parsed at load, so
    every expression here parses)."""
    if isinstance(value, str):
        whole = _EXPRESSION.fullmatch(value)
        if whole is not None and "}}" not in whole.group(1):
            return parse(whole.group(1)).value(arguments)
        return _EXPRESSION.sub(lambda m: _as_text(parse(m.group(1)).value(arguments)), value)
    if isinstance(value, dict):
        return {key: render(item, arguments) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [render(item, arguments) for item in value]
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def sample_arguments(model: type[BaseModel]) -> list[dict[str, JsonValue]]:
    """Arguments to render expressions with at load: every field a sample of its JSON type
    (the first of its allowed values, if it lists them); then, when the tool has optional
    arguments, the same call with those left out (their defaults), as a call that omits them
    gets. A response must fit the result schema with both."""
    schema = model.model_json_schema(by_alias=False)
    defs = schema.get("$defs", {})
    sample = {name: _sample(prop, defs) for name, prop in schema.get("properties", {}).items()}
    omitted = {**sample, **{name: to_jsonable_python(info.get_default(call_default_factory=True))
                            for name, info in model.model_fields.items()
                            if not info.is_required()}}
    return [sample] if omitted == sample else [sample, omitted]


def _sample(schema: dict[str, Any], defs: dict[str, Any]) -> JsonValue:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "const" in schema:
        return schema["const"]  # type: ignore[no-any-return]
    if schema.get("enum"):
        return schema["enum"][0]  # type: ignore[no-any-return]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:  # `X | None`: a sample of X (left out, it is the default: the other world)
        kinds = [o for o in options if o.get("type") != "null"] or options
        return _sample(kinds[0], defs)
    kind = schema.get("type", "string")
    return _SAMPLES.get(kind if isinstance(kind, str) else kind[0], "sample")
