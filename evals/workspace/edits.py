"""What the workspace's forms change, as edits of one file's entries (see sources.py): each
finds its entry by id, changes only the keys the form is about, and leaves the rest of the
entry (comments, other keys, their order) as it was."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from evals.load.yamlfile import MAX_DEPTH
from evals.workspace.sources import (
    Conflict,
    Edit,
    Invalid,
    dump_entry,
    load_entry,
    plain_data,
    rewritten,
)

Change = Callable[[Any], None]  # changes one entry's mapping in place
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
    def edit(entries: list[str]) -> list[str]:
        return [*entries, dump_entry(_commented(data))]
    return edit


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
    value = json_text(text, what)
    if not isinstance(value, dict):
        raise Invalid(f"{what}: a response is a JSON object ({{...}}), or {{\"error\": \"...\"}}")
    return value


# frozen tool responses: one result at a time ----------------------------------------------------

@dataclass(frozen=True)
class At:
    """Which result of a tool's frozen responses an edit is about: the default's (branch None)
    or a branch's (0-based), its `index`-th response (0-based), or a new one after the last
    (index None). Written in a form as `default-1`, `branch-2-1`, `default-new`."""

    branch: int | None = None
    index: int | None = None

    @classmethod
    def parse(cls, text: str) -> At | None:
        found = re.fullmatch(r"(?:default|branch-([1-9][0-9]{0,8}))-(new|[1-9][0-9]{0,8})", text)
        if found is None:
            return None
        branch, index = found.groups()
        return cls(int(branch) - 1 if branch else None,
                   None if index == "new" else int(index) - 1)

    def key(self) -> str:
        unit = "default" if self.branch is None else f"branch-{self.branch + 1}"
        return f"{unit}-{'new' if self.index is None else self.index + 1}"

    def label(self) -> str:
        unit = "the default" if self.branch is None else f"branch {self.branch + 1}"
        return (f"a new response of {unit}" if self.index is None else
                f"{unit}, response {self.index + 1}")


def unfreeze(tool: str) -> Change:
    """The tool's frozen responses removed: it answers from the item's own database again."""
    def change(data: Any) -> None:
        frozen = data.get("tool_responses")
        if isinstance(frozen, CommentedMap):
            frozen.pop(tool, None)
            if not frozen:
                data.pop("tool_responses")
    return change


def tool_result(tool: str, contract: str, at: At, response: dict[str, Any] | None,
                exhausted: str = "error") -> Change:
    """One result of a tool's frozen responses set (or, with None, taken out of its sequence);
    the rest of the tool (its branches with their conditions, delays, states and exhaustion,
    the order of every sequence, the expressions in other results, its default) as written,
    and the keys of the result the form did not change too. `contract` is recorded (the tool's
    today, which the loader then checks every response against). A tool with no frozen
    responses gets a static one (`response:`, with `exhausted` if not error); the workspace
    writes no new branch and turns no static response into a sequence."""
    def change(data: Any) -> None:
        frozen = data.get("tool_responses")
        entry = frozen.get(tool) if isinstance(frozen, CommentedMap) else None
        if entry is None:
            if response is None or at != At():
                raise Conflict(f"{tool} has no frozen responses in the file any more; reload")
            if not isinstance(frozen, CommentedMap):
                frozen = CommentedMap()
                data["tool_responses"] = frozen
            created = CommentedMap(contract=contract)
            created["response"] = _commented(response)
            if exhausted != "error":
                created["exhausted"] = exhausted
            frozen[tool] = created
            return
        if not isinstance(entry, CommentedMap):
            raise Invalid(f"{tool}: its frozen responses are not a mapping; edit the file")
        _set_result(_unit(entry, tool, at), tool, at, response)
        if entry.get("contract") != contract:
            entry["contract"] = contract
    return change


def _unit(entry: CommentedMap, tool: str, at: At) -> CommentedMap:
    if at.branch is None:
        return entry
    branches = entry.get("branches")
    if not isinstance(branches, CommentedSeq) or not 0 <= at.branch < len(branches) or \
            not isinstance(branches[at.branch], CommentedMap):
        raise Conflict(f"{tool} has no branch {at.branch + 1} in the file any more; reload")
    unit: CommentedMap = branches[at.branch]
    return unit


def _set_result(unit: CommentedMap, tool: str, at: At, response: dict[str, Any] | None
                ) -> None:
    where = f"{tool}, {at.label()}"
    sequence = unit.get("responses")
    if unit.get("response") is not None:
        if at.index is None:
            raise Invalid(f"{where}: it answers one static response; the workspace does not"
                          " turn it into a sequence (write responses: in the file)")
        if at.index != 0:
            raise Conflict(f"{where}: not in the file any more; reload")
        if response is None:
            raise Invalid(f"{where}: its only response; the workspace removes no branch or"
                          " default (Unfreeze removes the whole tool's responses)")
        _replace(unit, "response", response)
    elif isinstance(sequence, CommentedSeq) and sequence:
        if at.index is None:
            if response is not None:
                sequence.append(_commented(response))
            return
        if not 0 <= at.index < len(sequence):
            raise Conflict(f"{where}: not in the file any more; reload")
        if response is not None:
            _replace(sequence, at.index, response)
        elif len(sequence) < 2:
            raise Invalid(f"{where}: the last response of its sequence; the workspace removes"
                          " no branch or default (Unfreeze removes the whole tool's responses)")
        else:
            del sequence[at.index]
    else:
        raise Invalid(f"{where}: there is no such sequence to add to (the workspace writes no"
                      " default or branch beside the ones in the file)")


def _replace(container: Any, key: Any, new: Any) -> None:
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
                _replace(old, k, v)
            else:
                old[k] = _commented(v)
        return
    if isinstance(old, CommentedSeq) and isinstance(new, list) and len(old) == len(new):
        for i, v in enumerate(new):
            _replace(old, i, v)
        return
    container[key] = _commented(new)


# expected actions -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Expected:
    """An expected action as a form gives it: the tool and its argument and result selectors
    (`field`, `field_in`, `field_contains`, `field_matches` -> value)."""

    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]


def expected_actions(rows: list[tuple[int | None, Expected]]) -> Change:
    """A scenario's expected actions as the form leaves them: each row an action of the file
    (its position there) or a new one (None, added at the end); an action of the file no row
    names is removed. The order stays, and so does the text of every unchanged action and
    selector; criteria and frozen responses are not touched."""
    def change(data: Any) -> None:
        old = data.get("expect_actions")
        actions = old if isinstance(old, CommentedSeq) else CommentedSeq()
        kept = [i for i, _ in rows if i is not None]
        if any(not 0 <= i < len(actions) for i in kept) or len(set(kept)) != len(kept):
            raise Conflict("the scenario's expected actions changed since the form was opened;"
                           " reload")
        for i, want in rows:
            if i is None:
                continue
            action = actions[i]
            if not isinstance(action, CommentedMap):
                raise Invalid(f"expected action {i + 1} is not a mapping; edit the file")
            if action.get("tool") != want.tool:
                action["tool"] = want.tool
            _selectors(action, "arguments", want.arguments)
            _selectors(action, "result", want.result)
        for i in sorted(set(range(len(actions))) - set(kept), reverse=True):
            del actions[i]
        for i, want in rows:
            if i is None:
                action = CommentedMap(tool=want.tool)
                _selectors(action, "arguments", want.arguments)
                _selectors(action, "result", want.result)
                actions.append(action)
        if not actions:
            data.pop("expect_actions", None)
        elif actions is not old:
            keys = list(data)
            at = min((keys.index(k) for k in ("end_state", "criteria") if k in data),
                     default=len(keys))
            data.insert(at, "expect_actions", actions)
    return change


def _selectors(action: CommentedMap, part: str, wanted: dict[str, Any]) -> None:
    """An action's `arguments` or `result` set to `wanted`, unchanged selectors as written; a
    new one is a flow mapping (`{slug: form-4}`), as the files write them."""
    if not wanted:
        action.pop(part, None)
    elif isinstance(action.get(part), CommentedMap):
        _replace(action, part, wanted)
    else:
        selectors = CommentedMap(wanted)
        selectors.fa.set_flow_style()
        at = list(action).index("tool") + 1 if part == "arguments" and "tool" in action \
            else len(action)
        action.pop(part, None)
        action.insert(min(at, len(action)), part, selectors)
