"""Why items moved between two versions: for each improved or regressed item, what changed for
its context (the capability fragments of its system prompt, its tool schemas, the chat model,
the agent's settings), the moved items grouped by the change they share. The diff is impact's
(evals/execute/impact/), said as impact says it (evals/report/diff.py); a context is the one
each result records it ran in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evals.execute.impact import context_diff, settings_words, where_of
from evals.record.comparison import Attribution, Change, Outcome
from evals.record.fingerprint import AgentInfo
from evals.record.run import RunRecord
from evals.report.diff import diff_lines
from evals.report.impact import id_list, wheres

MOVED: tuple[Outcome, ...] = ("regressed", "improved")


def attribute(baseline: RunRecord, current: RunRecord, outcomes: Mapping[str, Outcome],
              unsettled: Sequence[str] = ()) -> list[Attribution]:
    """The improved and regressed items of `outcomes` (item id -> outcome), and the
    `unsettled` ones (uncertain, but their status changed), grouped by what changed for their
    context; the group with the most regressions first."""
    keys = {r.id: r.context for r in baseline.cases if r.context}
    keys |= {r.id: r.context for r in current.cases if r.context}
    changes: dict[str | None, Change] = {}
    groups: dict[Change, Attribution] = {}
    moved = [(item, outcome) for item, outcome in outcomes.items() if outcome in MOVED]
    for item, outcome in [*moved, *((i, "unsettled") for i in unsettled)]:
        key = keys.get(item)
        if key not in changes:
            changes[key] = change_for(baseline.agent, current.agent, key)
        group = groups.setdefault(changes[key], Attribution(change=changes[key]))
        {"improved": group.improved, "regressed": group.regressed}.get(
            outcome, group.unsettled).append(item)
        if key is not None and key not in group.contexts:
            group.contexts.append(key)
    return sorted(groups.values(), key=lambda g: (-len(g.regressed), -len(g.improved),
                                                  -len(g.unsettled)))


def change_for(before: AgentInfo | None, now: AgentInfo | None, key: str | None) -> Change:
    """What differs between two agents for the context `key` (None: not recorded)."""
    if before is None or now is None:
        return Change(unknown="a run records no agent")
    model = f"{before.model} → {now.model}" if before.model != now.model else None
    settings = f"{settings_words(before.settings)} → {settings_words(now.settings)}" \
        if before.settings != now.settings else None
    if key is None:
        return Change(model=model, settings=settings,
                      unknown="the runs do not record the item's context")
    context = now.contexts.get(key)
    if context is None:
        return Change(model=model, settings=settings,
                      unknown=f"the current agent has no context {key!r}")
    prompt, tools, order_changed = context_diff(before.contexts.get(key), context,
                                                now.fragments_in(key))
    return Change(model=model, settings=settings, new_context=key not in before.contexts,
                  prompt=prompt, tools=tools, order_changed=order_changed)


def headline(group: Attribution) -> str:
    """One line: how many moved which way, where, and after what."""
    moved = [f"{len(ids)} {outcome} ({id_list(tuple(ids))})" for outcome, ids in
             (("regressed", group.regressed), ("improved", group.improved),
              ("moved but undecided", group.unsettled)) if ids]
    where = wheres([where_of(k) for k in group.contexts])
    return ", ".join(moved) + (f" · {'; '.join(where)}" if where else "") + \
        f": {group.change.describe()}"


def render(groups: Sequence[Attribution]) -> list[str]:
    """Why the moved items moved: a line per shared change, then its diff once."""
    if not groups:
        return []
    out = ["", "why they moved:"]
    for group in groups:
        out.append(f"  {headline(group)}")
        out += [f"    {line}" for line in diff_lines(group.change)]
    return out
