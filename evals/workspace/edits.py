"""What the workspace's forms change, as edits of one file's entries (see sources.py): each
finds its entry by id, changes only the keys the form is about, and leaves the rest of the
entry (comments, other keys, their order) as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from evals.workspace.sources import (
    Conflict,
    Edit,
    Invalid,
    dump_entry,
    load_entry,
    rewritten,
)

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
    def edit(entries: list[str]) -> list[str]:
        return [*entries, dump_entry(_commented(data))]
    return edit


def _plain(value: Any) -> Any:
    """A YAML value as plain JSON data, for comparing what two texts say."""
    return json.loads(json.dumps(value, default=str))


def _commented(value: Any) -> Any:
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = _commented(v)
        return m
    if isinstance(value, list):
        return CommentedSeq([_commented(v) for v in value])
    return value


# the forms' changes ---------------------------------------------------------------------------

def case_fields(new_id: str | None, prompt: str | None, group: str | None,
                rubric: str | None, must_not: str | None) -> Change:
    """A case's own fields; a field the form did not send is left as it is."""
    def change(data: Any) -> None:
        if new_id is not None and not same(data.get("id"), new_id):
            data["id"] = new_id.strip()
        if prompt is not None and not same(data.get("prompt"), prompt):
            data["prompt"] = text_value(prompt)
        set_key(data, "group", _stripped(group), after="id")
        set_key(data, "rubric", text_value(rubric), after="prompt")
        set_key(data, "must_not", text_value(must_not), after="rubric")
    return change


def _stripped(value: str | None) -> str | None:
    return value.strip() if value is not None else None


VISITOR_KEYS = ("who", "wants", "knows", "does_not_know", "will_say", "wont_say")


def scenario_fields(new_id: str | None, group: str | None, opening: str | None,
                    visitor: dict[str, str | None], criteria: list[tuple[str, str]] | None
                    ) -> Change:
    """The scenario's own fields and its whole criteria list (statement, enforcement); what
    the form did not send (None) is left as it is."""
    def change(data: Any) -> None:
        if new_id is not None and not same(data.get("id"), new_id):
            data["id"] = new_id.strip()
        set_key(data, "group", _stripped(group), after="id")
        who = data.get("visitor")
        if not isinstance(who, CommentedMap) and any(v for v in visitor.values()):
            who = CommentedMap()
            data["visitor"] = who
        if isinstance(who, CommentedMap):
            for key in VISITOR_KEYS:
                set_key(who, key, text_value(visitor.get(key)))
        set_key(data, "opening", text_value(opening), after="visitor")
        if criteria is not None:
            rows = _criteria(criteria, data.get("criteria"))
            if rows != data.get("criteria"):
                if rows:
                    data["criteria"] = rows
                else:
                    data.pop("criteria", None)
    return change


def _criteria(rows: list[tuple[str, str]], old: Any) -> CommentedSeq | Any:
    """The criteria rows as YAML, each unchanged row keeping its own mapping (and comments);
    the old list itself when nothing changed."""
    before: dict[tuple[str, str], list[Any]] = {}
    for c in old or []:
        if isinstance(c, CommentedMap):
            key = (str(c.get("statement", "")).strip(), str(c.get("enforcement", "required")))
            before.setdefault(key, []).append(c)
    wanted = [(st.strip(), en) for st, en in rows]
    if isinstance(old, CommentedSeq) and len(old) == len(wanted) and all(
            isinstance(c, CommentedMap) and (str(c.get("statement", "")).strip(),
                                             str(c.get("enforcement", "required"))) == w
            for c, w in zip(old, wanted, strict=True)):
        return old
    out = CommentedSeq()
    for statement, enforcement in wanted:
        kept = before.get((statement, enforcement))
        if kept:
            out.append(kept.pop(0))  # each old row used once: no YAML alias
            continue
        row = CommentedMap(statement=text_value(statement))
        if enforcement != "required":
            row["enforcement"] = enforcement
        out.append(row)
    return out


def add_criterion(statement: str, enforcement: str) -> Change:
    def change(data: Any) -> None:
        rows = data.get("criteria")
        if not isinstance(rows, CommentedSeq):
            rows = CommentedSeq()
            data["criteria"] = rows
        row = CommentedMap(statement=text_value(statement))
        if enforcement != "required":
            row["enforcement"] = enforcement
        rows.append(row)
    return change


def shared_fields(statement: str | None, enforcement: str | None, applies_to: str | None
                  ) -> Change:
    def change(data: Any) -> None:
        if statement is not None and not same(data.get("statement"), statement):
            data["statement"] = text_value(statement)
        if enforcement is not None and enforcement != data.get("enforcement", "required"):
            data["enforcement"] = enforcement
        if applies_to is not None:
            targets = parse_applies_to(applies_to)
            old = data.get("applies_to")
            if _targets(old) != _targets(targets):
                data["applies_to"] = targets
    return change


def _targets(value: Any) -> Any:
    return "all" if value == "all" else [str(v) for v in value or []]



def parse_applies_to(value: str) -> Any:
    value = value.strip()
    if value in ("", "all"):
        return "all"
    ids = CommentedSeq(v.strip() for v in value.split(",") if v.strip())
    ids.fa.set_flow_style()
    return ids


def set_group(group: str) -> Change:
    def change(data: Any) -> None:
        set_key(data, "group", group.strip(), after="id")
    return change


def parse_json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Invalid(f"{what}: not JSON: {exc.msg} at line {exc.lineno} column"
                      f" {exc.colno}") from exc
    if not isinstance(value, dict):
        raise Invalid(f"{what}: a response is a JSON object ({{...}}), or {{\"error\": \"...\"}}")
    return value


def tool_responses(tool: str, contract: str, responses: list[dict[str, Any]] | None,
                   exhausted: str) -> Change:
    """A tool's frozen responses, written as a sequence (or removed with None)."""
    def change(data: Any) -> None:
        frozen = data.get("tool_responses")
        if responses is None:
            if isinstance(frozen, CommentedMap):
                frozen.pop(tool, None)
                if not frozen:
                    data.pop("tool_responses")
            return
        if not isinstance(frozen, CommentedMap):
            frozen = CommentedMap()
            data["tool_responses"] = frozen
        old = frozen.get(tool)
        if isinstance(old, dict) and old.get("contract") == contract and \
                old.get("exhausted", "error") == exhausted and \
                _plain(old.get("responses") or [old.get("response")]) == _plain(responses):
            return  # what the file says already: its text stays as written
        entry = CommentedMap(contract=contract)
        entry["responses"] = _commented(responses)
        if exhausted != "error":
            entry["exhausted"] = exhausted
        frozen[tool] = entry
    return change
