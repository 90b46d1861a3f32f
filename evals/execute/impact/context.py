"""What differs in one context between two agents: the system prompt's changed lines, each put
down to the capability whose fragment holds them today (removed text to the one it was next
to), and the tools added, removed or changed, each put down to the capability that registers
it. A stored agent keeps only each context's whole prompt, so the prompt is diffed line by
line; its fragments' line counts, where recorded, say whose each line is."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from typing import Any

from app.capabilities import REGISTRY
from evals.record.comparison import WHOLE_PROMPT, FragmentDiff, ToolDiff
from evals.record.fingerprint import FrozenContext

DIFF_LINES = 6  # changed lines shown per capability (or tool), the rest counted
LINE_CHARS = 100  # a diff line longer than this is cut
CONTEXT_CHARS = 30  # the unchanged text shown before a changed line's first difference


def context_diff(before: FrozenContext | None, now: FrozenContext,
                 fragments: Mapping[str, str] | None = None
                 ) -> tuple[tuple[FragmentDiff, ...], tuple[ToolDiff, ...], bool]:
    """What differs in one context: the prompt's changed lines by capability (`fragments`,
    today's by name, say whose), the tools changed, and whether only the tools' order did.
    A context the baseline lacks (`before` None) has no diff, only its tools' order."""
    tools, order_changed = tool_changes(before.tools if before else [], now.tools)
    if before is None:
        return (), (), order_changed
    return prompt_changes(before.system_prompt, now.system_prompt, fragments), tools, \
        order_changed


# the system prompt ---------------------------------------------------------------------------

def _owners(lines: list[str], fragments: Mapping[str, str] | None) -> list[str | None]:
    """Which capability's fragment each line of a prompt is in (None: a separator, or not
    found). Fragments stand in the prompt in their order, so each is looked for after the
    one before."""
    owners: list[str | None] = [None] * len(lines)
    cursor = 0
    for name, text in (fragments or {}).items():
        flines = text.splitlines()
        if not flines:
            continue
        for start in range(cursor, len(lines) - len(flines) + 1):
            if lines[start:start + len(flines)] == flines:
                owners[start:start + len(flines)] = [name] * len(flines)
                cursor = start + len(flines)
                break
    return owners


def _nearest(owners: list[str | None], at: int) -> str | None:
    """The capability of the line at `at`, else of the nearest line above, else below."""
    for n in [*range(min(at, len(owners) - 1), -1, -1), *range(at + 1, len(owners))]:
        if owners[n] is not None:
            return owners[n]
    return None


def prompt_changes(old: str, new: str, fragments: Mapping[str, str] | None
                   ) -> tuple[FragmentDiff, ...]:
    """The prompt's changed lines, grouped by the capability each hunk belongs to today."""
    a, b = old.splitlines(), new.splitlines()
    owners = _owners(b, fragments)
    fallback = WHOLE_PROMPT if not fragments else "removed text"
    lines: dict[str, list[str]] = {}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        removed, added = _windows(a[i1:i2], b[j1:j2])
        caps = [_nearest(owners, j) or fallback for j in range(j1, j2)]
        if caps:
            first = caps[0]
        else:  # removed text: the fragment it ended (the line before is that fragment's),
            # else the one it began (the line after is; before it, a separator), else nearest
            before = owners[j1 - 1] if 0 < j1 <= len(owners) else None
            after = owners[j1] if j1 < len(owners) else None
            near = before or after or _nearest(owners, j1 - 1 if j1 > 0 else j1)
            first = f"removed text (near {near})" if near else fallback
        lines.setdefault(first, []).extend("-" + line for line in removed)
        for cap, line in zip(caps, added, strict=True):
            lines.setdefault(cap, []).append("+" + line)
    if not lines and old != new:  # only line endings or trailing space differ
        lines[WHOLE_PROMPT] = ["(whitespace only)"]
    return tuple(FragmentDiff(capability=cap, diff=tuple(diff[:DIFF_LINES]),
                              more=max(len(diff) - DIFF_LINES, 0))
                 for cap, diff in lines.items())


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 1] + "…"


def _windows(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """Changed lines cut to where they differ: a prompt's line is often a whole paragraph,
    so a line and the one replacing it both start a little before their first difference."""
    old, new = list(old), list(new)
    for n in range(min(len(old), len(new))):
        same = len(os.path.commonprefix([old[n], new[n]]))
        if same > LINE_CHARS - 2 * CONTEXT_CHARS:  # else the difference shows uncut
            start = same - CONTEXT_CHARS
            old[n], new[n] = "…" + old[n][start:], "…" + new[n][start:]
    return [_cut(line) for line in old], [_cut(line) for line in new]


# tools ---------------------------------------------------------------------------------------

def _function(schema: Mapping[str, Any]) -> dict[str, Any]:
    fn = schema.get("function")
    return fn if isinstance(fn, dict) else {}


def tool_changes(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
                 ) -> tuple[tuple[ToolDiff, ...], bool]:
    """Tools added, removed or changed (by name), and whether only their order changed."""
    before = {str(_function(s).get("name", "")): _function(s) for s in old}
    now = {str(_function(s).get("name", "")): _function(s) for s in new}
    owner = {t.name: c.name for c in REGISTRY.ordered() for t in c.tools}
    out: list[ToolDiff] = []
    for name in sorted(before.keys() | now.keys()):
        cap = owner.get(name)
        if name not in before:
            out.append(ToolDiff(name=name, capability=cap, what="added"))
        elif name not in now:
            out.append(ToolDiff(name=name, capability=cap, what="removed"))
        elif before[name] != now[name]:
            out.append(_tool_change(name, cap, before[name], now[name]))
    order_changed = not out and list(before) != list(now)
    return tuple(out), order_changed


def _tool_change(name: str, cap: str | None, old: dict[str, Any], new: dict[str, Any]
                 ) -> ToolDiff:
    what: list[str] = []
    diff: list[str] = []
    if old.get("description") != new.get("description"):
        what.append("description changed")
        a = str(old.get("description", "")).splitlines()
        b = str(new.get("description", "")).splitlines()
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b,
                                                          autojunk=False).get_opcodes():
            if op != "equal":
                removed, added = _windows(a[i1:i2], b[j1:j2])
                diff += ["-" + line for line in removed] + ["+" + line for line in added]
    if old.get("parameters") != new.get("parameters"):
        props = _properties(old.get("parameters")), _properties(new.get("parameters"))
        names = sorted(k for k in props[0].keys() | props[1].keys()
                       if props[0].get(k) != props[1].get(k))
        what.append("parameters changed" + (f": {', '.join(names)}" if names else ""))
    rest = {k for k in old.keys() | new.keys() if k not in ("name", "description", "parameters")
            and old.get(k) != new.get(k)}
    if rest:
        what.append(f"{', '.join(sorted(rest))} changed")
    return ToolDiff(name=name, capability=cap, what="; ".join(what),
                    diff=tuple(diff[:DIFF_LINES]), more=max(len(diff) - DIFF_LINES, 0))


def _properties(params: object) -> dict[str, Any]:
    if not isinstance(params, dict):
        return {}
    props = params.get("properties")
    out = dict(props) if isinstance(props, dict) else {}
    rest = {k: v for k, v in params.items() if k != "properties"}
    if rest:
        out["(schema)"] = rest  # required, $defs, …: named as the schema's own part
    return out
