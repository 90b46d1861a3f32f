"""A form's values read as a case or scenario file will hold them: a whole number, and JSON
nested no deeper than the loader takes (a frozen response, a selector's value)."""

from __future__ import annotations

import json
import re
from typing import Any

from evals.load.yamlfile import MAX_DEPTH
from evals.workspace.refusals import Invalid

_WHOLE = re.compile(r"[0-9]{1,9}")


def whole_number(text: str | None) -> int | None:
    """A form's whole number, or None: ASCII digits only (str.isdigit takes "²", which int
    refuses)."""
    return int(text) if text is not None and _WHOLE.fullmatch(text) else None


def json_text(text: str, what: str) -> Any:
    """A form's JSON value. Invalid when it is not JSON, or is nested deeper than a case file
    may be (the loader's MAX_DEPTH), refused before anything is built from it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Invalid(f"{what}: not JSON: {exc.msg} at line {exc.lineno} column"
                      f" {exc.colno}") from exc
    except RecursionError:
        raise Invalid(f"{what}: nested deeper than {MAX_DEPTH} levels") from None
    return within_depth(value, what)


def within_depth(value: Any, what: str) -> Any:
    """`value` as it is; Invalid when it nests deeper than the loader's MAX_DEPTH."""
    if _depth(value) > MAX_DEPTH:
        raise Invalid(f"{what}: nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """How deep lists and objects nest in a JSON value (a scalar is 0), without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        node, level = todo.pop()
        children = node.values() if isinstance(node, dict) else \
            node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        todo += [(child, level + 1) for child in children]
    return deepest


def parse_json_object(text: str, what: str) -> dict[str, Any]:
    """A form's JSON object (a frozen response); Invalid when it is anything else."""
    value = json_text(text, what)
    if not isinstance(value, dict):
        raise Invalid(f"{what}: a response is a JSON object ({{...}}), or {{\"error\": \"...\"}}")
    return value

