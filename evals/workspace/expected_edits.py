"""What the scenario form changes of a scenario's expected actions (the form itself is in
expected.py): each action of the file the form names, changed where it differs, the rest
removed, new ones added at the end, with the text of every unchanged action and selector kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from evals.workspace.edits import Change, replace_keeping
from evals.workspace.refusals import Conflict, Invalid


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
        replace_keeping(action, part, wanted)
    else:
        selectors = CommentedMap(wanted)
        selectors.fa.set_flow_style()
        at = list(action).index("tool") + 1 if part == "arguments" and "tool" in action \
            else len(action)
        action.pop(part, None)
        action.insert(min(at, len(action)), part, selectors)
