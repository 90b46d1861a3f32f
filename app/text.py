"""Text as PostgreSQL can store it: no NUL (text and jsonb cannot hold one) and no lone
surrogate (not encodable as UTF-8). Model output, tool results and web pages are data from
outside; they are cleaned before they are stored or sent on."""

from __future__ import annotations

import re
from typing import Any

UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
# Half of a UTF-16 pair: JSON and YAML escapes can write one ("\ud800"), but no text holds it
# (UTF-8 cannot encode it), so nothing that must be written or sent on may.
SURROGATE = re.compile(r"[\ud800-\udfff]")
# What a hand-written file (a case, a label, a frozen response) may not hold: the C0 controls
# but tab, line feed and carriage return, and DEL.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def control_named(char: str) -> str:
    """A refused character as every refusal names it: "control character U+0007", or "lone
    surrogate U+D800" for half of a UTF-16 pair."""
    if SURROGATE.fullmatch(char):
        return f"lone surrogate U+{ord(char):04X}"
    return f"control character U+{ord(char):04X}"


def found_in(value: Any, *patterns: re.Pattern[str], path: tuple[Any, ...] = ()
             ) -> tuple[tuple[Any, ...], str] | None:
    """Where one of `patterns` first matches in a value's keys or text (the keys and list
    places that lead to it) and what it matched; None when nowhere."""
    if isinstance(value, str):
        found = next((m for p in patterns if (m := p.search(value))), None)
        return (path, found.group()) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            hit = found_in(key, *patterns, path=(*path, key)) or \
                found_in(item, *patterns, path=(*path, key))
            if hit:
                return hit
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            hit = found_in(item, *patterns, path=(*path, i))
            if hit:
                return hit
    return None


def storable(value: Any) -> Any:
    """The value with NUL and lone surrogates removed from every string in it."""
    if isinstance(value, str):
        return UNSTORABLE.sub("", value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value
