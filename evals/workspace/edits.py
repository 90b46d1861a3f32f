"""Edits of one file's entries (see sources.py), as ruamel.yaml round-trips them: each finds
its entry by id (or position), changes only the keys a form is about, and leaves the rest of
the entry (comments, other keys, their order) as it was. What each form changes is in
field_edits.py (a case's or scenario's fields, criteria), expected_edits.py (a scenario's
expected actions) and frozen_edits.py (one result of a tool's frozen responses)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from evals.workspace.entries import Edit, dump_entry, load_entry, plain_data, rewritten
from evals.workspace.refusals import Conflict

Change = Callable[[Any], None]  # changes one entry's mapping in place


def text_value(value: str | None) -> str | None:
    """A form's text as YAML will keep it: CRLF made LF, outer blanks trimmed, several lines
    as a literal block; None (no such field in the form) stays None."""
    if value is None:
        return None
    value = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    return LiteralScalarString(value + "\n") if "\n" in value else value


def same(old: Any, new: Any) -> bool:
    """Whether a form's value says what the file says already (text compared as a person
    reads it: a block scalar's final line break and outer blanks do not count)."""
    if isinstance(old, str) and isinstance(new, str):
        return old.strip() == new.strip()
    return bool(old == new)


def set_key(data: Any, key: str, value: Any, *, after: str | None = None) -> None:
    """Set (or, for an empty value, remove) a key; a new key goes after `after` if present.
    None leaves the key alone (the form did not have that field); a value the file already
    says leaves its text as written."""
    if value is None or same(data.get(key), value):
        return
    if value in ("", [], {}):
        data.pop(key, None)
        return
    if key in data or after is None or after not in data:
        data[key] = value
        return
    data.insert(list(data).index(after) + 1, key, value)


def on_entry(entry_id: str, change: Change) -> Edit:
    """Apply `change` to the entry with this id; Conflict if the file has none."""
    def edit(entries: list[str]) -> list[str]:
        out, found = [], False
        for text in entries:
            data = load_entry(text)
            if isinstance(data, CommentedMap) and str(data.get("id")) == entry_id:
                found = True
                change(data)
                text = rewritten(text, data)
            out.append(text)
        if not found:
            raise Conflict(f"{entry_id!r} is no longer in its file (renamed or removed since"
                           " the page was opened); reload")
        return out
    return edit


def together(changes: list[Change]) -> Change:
    """Several changes of one entry, in order (one save, checked once on the result)."""
    def change(data: Any) -> None:
        for one in changes:
            one(data)
    return change


def on_index(index: int, change: Change | None) -> Edit:
    """Change (or, with None, remove) the entry at this position (shared criteria have no id)."""
    def edit(entries: list[str]) -> list[str]:
        if not 0 <= index < len(entries):
            raise Conflict(f"entry {index + 1} is no longer in the file; reload")
        if change is None:
            return entries[:index] + entries[index + 1:]
        data = load_entry(entries[index])
        change(data)
        return [*entries[:index], rewritten(entries[index], data), *entries[index + 1:]]
    return edit


def appended(data: dict[str, Any]) -> Edit:
    """A new entry at the end of the file, written from plain data."""
    def edit(entries: list[str]) -> list[str]:
        return [*entries, dump_entry(commented(data))]
    return edit


def commented(value: Any) -> Any:
    """A plain value (dicts, lists, scalars) as YAML nodes that keep their order and comments."""
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = commented(v)
        return m
    if isinstance(value, list):
        return CommentedSeq([commented(v) for v in value])
    return value


def replace_keeping(container: Any, key: Any, new: Any) -> None:
    """Set container[key] to `new`, keeping what is equal as written: a mapping's unchanged
    keys (their text and order), a list's unchanged items when its length is the same."""
    old = container[key]
    if plain_data(old) == plain_data(new):
        return
    if isinstance(old, CommentedMap) and isinstance(new, dict):
        for gone in [k for k in old if k not in new]:
            del old[gone]
        for k, v in new.items():
            if k in old:
                replace_keeping(old, k, v)
            else:
                old[k] = commented(v)
        return
    if isinstance(old, CommentedSeq) and isinstance(new, list) and len(old) == len(new):
        for i, v in enumerate(new):
            replace_keeping(old, i, v)
        return
    container[key] = commented(new)
