"""A change to what the model is told, as a person reads it: each changed capability fragment
with its lines, then each changed tool, once. Impact's report (before a run) and the
comparison's attribution (after two) both say a change this way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evals.record.comparison import FragmentDiff, ToolDiff


class Diff(Protocol):
    """What differs in one context's prompt and tools (a comparison's Change, impact's
    ContextChange)."""

    @property
    def prompt(self) -> Sequence[FragmentDiff]: ...

    @property
    def tools(self) -> Sequence[ToolDiff]: ...


def diff_lines(change: Diff) -> list[str]:
    """The change's diff, per capability and per tool, each changed line indented under it."""
    out: list[str] = []
    for f in change.prompt:
        out.append(f"{f.capability}:")
        out += _changed(f.diff, f.more)
    for t in change.tools:
        out.append(f"tool {t.name} ({t.capability or 'no capability registers it'}): {t.what}")
        out += _changed(t.diff, t.more)
    return out


def _changed(diff: Sequence[str], more: int) -> list[str]:
    return [f"  {line}" for line in diff] + ([f"  … {more} more changed line(s)"] if more else [])
