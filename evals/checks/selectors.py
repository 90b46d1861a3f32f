"""The selector language: how a check picks out a tool call by its arguments and its result (a
scenario's `expect_actions`, a case's `called_tool`, `not_called_tool` and `proposed_action`),
and a row of a scenario's end state by its columns. One place for what each form means
(`matches`) and what a file may write (`selector_errors`, used by both loaders).

- `field: value`: the field equals it; text case-insensitively, ends trimmed; `null`: the
  field is absent or empty;
- `field_in: [a, b]`: the field equals one of them, as above;
- `field_contains: text`: the field is text containing it, case-insensitively;
- `field_matches: pattern`: the field is text in which the regular expression is found
  (a search, case-insensitive: anchor it with `^…$` to match the whole value; Python's
  syntax, at most MAX_PATTERN characters, run by the `regex` package with a time limit, so
  a pattern that backtracks without end on what the model wrote is no match, never a hang).

A call fits when every selector fits; no selectors fit any call.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import regex
from pydantic import BaseModel, JsonValue
from pydantic.config import JsonDict

from app.capabilities import REGISTRY
from evals.record.transcript import ToolCall

Form = Literal["is", "in", "contains", "matches"]
FORMS: tuple[Form, ...] = ("is", "in", "contains", "matches")
# A key ending in one of these selects by that form; any other key is `is`.
SUFFIXES: dict[str, Form] = {"_contains": "contains", "_in": "in", "_matches": "matches"}
# Selectors as a file writes them: field (with its form's suffix) -> value.
Selectors = dict[str, JsonValue]
MAX_PATTERN = 500
PATTERN_TIMEOUT_S = 0.05


def tool_names(*kinds: str) -> Callable[[JsonDict], None]:
    """A field's `json_schema_extra`: its JSON Schema lists the registered tools' names (of
    these kinds, or all), so that an editor completes a tool's name and flags a wrong one, as
    the field's validator does when the file loads."""
    def extra(schema: JsonDict) -> None:
        names: list[JsonValue] = [name for name, tool in sorted(REGISTRY.all_tools().items())
                                  if not kinds or tool.kind in kinds]
        schema["enum"] = names
    return extra


def parse(key: str) -> tuple[str, Form]:
    """A selector's key as (field, form): `slug_in` is ('slug', 'in')."""
    for suffix, form in SUFFIXES.items():
        if key.endswith(suffix) and len(key) > len(suffix):
            return key.removesuffix(suffix), form
    return key, "is"


def _equal(got: Any, want: Any) -> bool:
    if want is None:
        return got in (None, "")
    if isinstance(want, str) and isinstance(got, str):
        return got.strip().lower() == want.strip().lower()
    return bool(got == want)


def _fits(form: Form, got: Any, want: Any) -> bool:
    if form == "is":
        return _equal(got, want)
    if form == "in":
        return isinstance(want, list) and any(_equal(got, w) for w in want)
    if not isinstance(got, str):
        return False
    if form == "contains":
        return str(want).lower() in got.lower()
    try:
        return regex.search(str(want), got, regex.IGNORECASE,
                            timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:  # catastrophic backtracking on what the model wrote: no match
        return False


def _miss(field: str, form: Form, got: Any, want: Any) -> str:
    if form == "is":
        return f"{field} is {got!r}, not {want!r}"
    if form == "in":
        return f"{field} is {got!r}, not one of {want!r}"
    if form == "contains":
        return f"{field} {got!r} lacks {want!r}"
    return f"{field} {got!r} does not match {want!r}"


def matches(actual: Any, selectors: Mapping[str, Any]) -> list[str]:
    """What in `actual` (a mapping) does not fit the selectors; empty when all fit (and always
    when there are none)."""
    if not selectors:
        return []
    if not isinstance(actual, dict):
        return ["not a mapping"]
    misses = []
    for key, want in selectors.items():
        field, form = parse(key)
        got = actual.get(field)
        if not _fits(form, got, want):
            misses.append(_miss(field, form, got, want))
    return misses


def call_misses(call: ToolCall, arguments: Mapping[str, Any], result: Mapping[str, Any]
                ) -> list[str]:
    """What in a tool call's arguments and result does not fit the selectors."""
    return matches(call.arguments, arguments) + matches(call.result, result)


def fitting(calls: list[ToolCall], arguments: Mapping[str, Any], result: Mapping[str, Any]
            ) -> list[ToolCall]:
    """The calls whose arguments and result fit the selectors."""
    return [c for c in calls if not call_misses(c, arguments, result)]


# Checking what a file writes ----------------------------------------------------------------


def _holds_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return any(isinstance(a, str) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return any(_holds_text(a) for a in get_args(annotation))
    if origin is Annotated:
        return _holds_text(get_args(annotation)[0])
    return False


def fields_of(model: type[BaseModel]) -> dict[str, bool]:
    """A model's fields as selectors may name them: field -> whether it holds text."""
    return {name: _holds_text(info.annotation) for name, info in model.model_fields.items()}


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def selector_errors(selectors: Mapping[str, Any], fields: Mapping[str, bool], what: str, *,
                    text_only: bool = False, forms: tuple[Form, ...] = FORMS
                    ) -> list[tuple[str, str]]:
    """Each selector a file may not write, as (its key, 'what: message'): an unknown field, a
    form not offered here, `_contains` or `_matches` on a field that holds no text or with a
    value that is not text, a pattern that does not compile, an `_in` that is not a list of
    one or more plain values. `fields` maps each field to whether it holds text; `text_only`
    (a table's columns): values are text or null, so YAML's `no` (false) is caught at load."""
    errors = []
    for key, value in selectors.items():
        problem = _problem(key, value, fields, text_only, forms)
        if problem:
            errors.append((key, f"{what}: {problem}"))
    return errors


def _problem(key: str, value: Any, fields: Mapping[str, bool], text_only: bool,
             forms: tuple[Form, ...]) -> str | None:
    field, form = parse(key)
    if field not in fields:
        return f"unknown field {field!r}; known: {', '.join(sorted(fields))}"
    if form not in forms:
        allowed = ", ".join("field: value" if f == "is" else f"field_{f}" for f in forms)
        return f"{key}: _{form} is not offered here (only {allowed})"
    if form in ("contains", "matches"):
        if not isinstance(value, str):
            return f"{key} needs text"
        if not fields[field]:
            return f"{key}: {field} is not text, so _{form} cannot select it"
        if form == "matches" and (bad := _bad_pattern(value)):
            return f"{key}: not a valid pattern ({bad})"
    if form == "is" and fields[field] and not _scalar(value):  # text never equals a list
        return (f"{key} needs a plain value (text, a number, true/false, null), not {value!r};"
                f" for one of several, write {field}_in")
    values = value if form == "in" else [value]
    if form == "in" and not (isinstance(value, list) and value and all(map(_scalar, value))):
        return (f"{key} needs a list of one or more plain values (text, numbers, true/false,"
                f" null), not {value!r}")
    if text_only and not all(isinstance(v, str | None) for v in values):
        return f"{key} needs text or null, not {value!r} (quote it)"
    return None


def _bad_pattern(pattern: str) -> str | None:
    if len(pattern) > MAX_PATTERN:
        return f"a pattern of {len(pattern):,} characters; at most {MAX_PATTERN}"
    try:
        regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        return str(exc) or type(exc).__name__
    return None
