"""What the frozen responses' editor changes (the editor itself is in frozen.py): one result of
a tool's frozen responses, set, added or taken out, with the rest of the tool as written; or the
tool's frozen responses removed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from evals.workspace.edits import Change, commented, replace_keeping
from evals.workspace.refusals import Conflict, Invalid


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
            created["response"] = commented(response)
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
        replace_keeping(unit, "response", response)
    elif isinstance(sequence, CommentedSeq) and sequence:
        if at.index is None:
            if response is not None:
                sequence.append(commented(response))
            return
        if not 0 <= at.index < len(sequence):
            raise Conflict(f"{where}: not in the file any more; reload")
        if response is not None:
            replace_keeping(sequence, at.index, response)
        elif len(sequence) < 2:
            raise Invalid(f"{where}: the last response of its sequence; the workspace removes"
                          " no branch or default (Unfreeze removes the whole tool's responses)")
        else:
            del sequence[at.index]
    else:
        raise Invalid(f"{where}: there is no such sequence to add to (the workspace writes no"
                      " default or branch beside the ones in the file)")
