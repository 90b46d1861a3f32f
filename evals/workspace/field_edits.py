"""What the Tests tab's forms change of a case or a scenario: its own fields (its group too,
which the Groups tab sets), a scenario's criteria, and the shared criteria of
scenarios/criteria.yaml; each a Change of one entry (edits.py)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from evals.workspace.edits import Change, same, set_key, text_value


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
    """A criterion added at the end of the scenario's list."""
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
    """A shared criterion's statement, enforcement and the scenarios it applies to; what the
    form did not send (None) is left as it is."""
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
    """A form's `applies_to`: \"all\" (or nothing), or the scenario ids it lists, as a flow list."""
    value = value.strip()
    if value in ("", "all"):
        return "all"
    ids = CommentedSeq(v.strip() for v in value.split(",") if v.strip())
    ids.fa.set_flow_style()
    return ids


def set_group(group: str) -> Change:
    """A case's or scenario's group, set beside its id."""
    def change(data: Any) -> None:
        set_key(data, "group", group.strip(), after="id")
    return change
