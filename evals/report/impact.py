"""The impact of a change as a person reads it: the line a run prints before its first item,
and the whole of it for `python -m evals impact`. What is touched and why is computed before
the run, where the requests are composed (evals/execute/impact/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import psycopg

from evals.execute.impact import (
    ContextChange,
    Impact,
    InputChange,
    impact,
    last_baseline,
    plural,
)
from evals.load.items import EvalItem
from evals.record.artifact import ArtifactError
from evals.record.fingerprint import AgentSettings, FrozenContext, PlanInfo
from evals.record.store import RunStore, StoreError
from evals.report.diff import diff_lines
from evals.settings import eval_settings

NO_BASELINE = "no earlier complete run under this plan: every item calls the model"
ITEMS_SHOWN = 8  # item ids (or input names) listed per group, the rest counted


def summary(result: Impact) -> str:
    """The one line a run prints before it starts."""
    if result.baseline is None:
        return NO_BASELINE
    n = len(result.touched)
    parts = wheres([c.where for c in result.changed])
    parts += _inputs_short(result.inputs)
    parts += [_short(why, group) for why, group in result.reasons]
    line = f"this change touches {n} of {result.total} items" + \
        (f" ({'; '.join(parts)})" if parts and n else "") + \
        f"; {result.total - n - len(result.unknown)} untouched"
    if result.unknown:
        line += (f"; {len(result.unknown)} not known yet (the look-alike lab's contexts are"
                 " composed once it is seeded)")
    return line


def _short(why: str, group: tuple[str, ...]) -> str:
    if why.startswith("the chat model changed"):
        return "the chat model changed"
    if why.startswith("the agent's settings"):
        return "the agent's settings changed"
    if why.startswith("the judge changed"):
        return f"{len(group)} judged, the judge changed"
    if why.startswith("new since"):
        return f"{len(group)} new"
    return f"{len(group)} edited"


def _inputs_short(inputs: Sequence[InputChange]) -> list[str]:
    """The changed inputs counted by kind: "1 photo changed", "2 catalogue records changed"."""
    counts: dict[str, int] = {}
    for change in inputs:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return [f"{n} {plural(kind) if n != 1 else kind} changed" for kind, n in counts.items()]


def wheres(places: Sequence[str]) -> list[str]:
    """Contexts ("staff on /tools/x"), short: "staff on /tools/…", one part per audience."""
    pages: dict[str, list[str]] = {}
    for place in places:
        who, _, page = place.partition(" on ")
        pages.setdefault(who, []).append(page.removesuffix(" (look-alike lab)"))
    out = []
    for who, found in pages.items():
        unique = sorted(set(found))
        out.append(f"{who} on {unique[0] if len(unique) == 1 else _prefix(unique)}")
    return out


def _prefix(pages: list[str]) -> str:
    """The pages' common path, with "…" for what differs ("/tools/…"; "3 pages")."""
    split = [p.strip("/").split("/") for p in pages]
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    return f"/{'/'.join(common)}/…" if common else f"{len(pages)} pages"


def render(result: Impact) -> list[str]:
    """The whole impact, for `python -m evals impact`: the last line is the summary."""
    if result.baseline is None:
        return [NO_BASELINE]
    base = result.baseline
    out = [f"against {base.label}: agent {base.agent.fingerprint[:8]} ({base.agent.model}),"
           f" plan {base.plan.fingerprint[:8]}"]
    out.append(f"contexts: {len(result.changed)} of {result.contexts_compared} changed")
    # Contexts changed alike (a staff fragment, on every staff page) are said once.
    alike: dict[tuple[object, ...], list[ContextChange]] = {}
    for c in result.changed:
        alike.setdefault((c.new, c.prompt, c.tools, c.order_changed), []).append(c)
    for group in alike.values():
        out += _context_lines(group, result.kinds)
    if result.inputs:
        out.append("inputs changed (what a request carries besides its context):")
        out += [f"  {what}: {_items(ids, result.kinds)}" for what, ids in _alike(result.inputs)]
    if result.reasons:
        out.append("touched for other reasons:")
        for why, ids in result.reasons:
            out.append(f"  {why}: " + (f"every item ({len(ids)})" if len(ids) == result.total
                                       else _items(ids, result.kinds)))
    if result.unknown:
        out.append(f"not known yet (their context is not composed):"
                   f" {_items(result.unknown, result.kinds)}")
    notes = [*result.notes]
    if result.removed:
        notes.append(f"{len(result.removed)} item(s) of the baseline are not in today's plan:"
                     f" {id_list(result.removed)}")
    out += [f"also in the plan (no request changes): {note}" for note in notes]
    out.append(summary(result))
    return out


def _alike(inputs: Sequence[InputChange]) -> list[tuple[str, tuple[str, ...]]]:
    """Inputs of one kind that touch the same items, said on one line: "catalogue records
    form-4 changed, prusa-mk4 added"."""
    groups: dict[tuple[object, ...], list[InputChange]] = {}
    for change in inputs:  # one of a kind is "<kind> <name> <how>" (but a file's records)
        named = change.what.startswith(f"{change.kind} ")
        groups.setdefault((change.kind, change.items) if named else (change,), []).append(
            change)
    out = []
    for group in groups.values():
        kind, ids = group[0].kind, group[0].items
        if len(group) == 1:
            out.append((group[0].what, ids))
            continue
        names = [c.what.removeprefix(f"{kind} ") for c in group]
        shown = ", ".join(names[:ITEMS_SHOWN]) + \
            (f", … {len(names) - ITEMS_SHOWN} more" if len(names) > ITEMS_SHOWN else "")
        out.append((f"{plural(kind)} {shown}", ids))
    return out


def _context_lines(group: list[ContextChange], kinds: Mapping[str, str]) -> list[str]:
    """Contexts changed alike: where, what changed, the diff once, and the items."""
    c = group[0]
    if c.new:
        head = "new: the baseline has no such context"
    else:
        what = []
        if c.prompt:
            what.append("system prompt changed in " + ", ".join(
                f.capability for f in c.prompt))
        if c.tools:
            what.append("tools changed: " + ", ".join(
                f"{t.name} ({t.capability or 'no capability'})" for t in c.tools))
        if c.order_changed:
            what.append("the same tools in another order")
        head = "; ".join(what)
    out = [f"  {', '.join(g.where for g in group)}: {head}"]
    out += [f"    {line}" for line in diff_lines(c)]
    out.append(f"    touches {_items([i for g in group for i in g.items], kinds)}")
    return out


def _items(ids: Sequence[str], kinds: Mapping[str, str]) -> str:
    """The items by kind, "2 cases (a, b), 1 scenario (s)", each list cut at ITEMS_SHOWN."""
    parts = []
    for kind in ("case", "scenario"):
        group = tuple(i for i in ids if kinds.get(i, "case") == kind)
        if group:
            parts.append(f"{len(group)} {kind}{'s' if len(group) != 1 else ''}"
                         f" ({id_list(group)})")
    return ", ".join(parts)


def id_list(ids: tuple[str, ...]) -> str:
    """Item ids, the list cut at ITEMS_SHOWN."""
    shown = ", ".join(ids[:ITEMS_SHOWN])
    return shown + (f", … {len(ids) - ITEMS_SHOWN} more" if len(ids) > ITEMS_SHOWN else "")


async def run_summary(store: RunStore, contexts: Mapping[str, FrozenContext],
                      items: Sequence[EvalItem], plan: PlanInfo, model: str,
                      settings: AgentSettings, cache: str = "off") -> str:
    """The line a run prints before its first item, against the last complete run under its
    plan, and whether the untouched items can replay that run's calls (`cache` is the run's
    policy); a store that cannot say is said in the line, and the run goes on."""
    try:
        baseline = await last_baseline(store, plan)
        kept = await store.cached_calls(list(baseline.call_runs), eval_settings().cache_ttl) \
            if baseline is not None and cache == "reuse" else None
    except (psycopg.Error, TimeoutError, StoreError, ArtifactError) as exc:
        return f"impact: not known ({type(exc).__name__}: {exc})"
    line = summary(impact(contexts, items, plan, model, settings, baseline))
    if baseline is None:
        return line
    if cache != "reuse":
        return line + f" (the call cache is {cache}: every item calls the model)"
    if not kept:
        return line + f" (the call cache holds none of {baseline.label.split(' (')[0]}'s"\
            " calls: they call the model)"
    # "can": the key holds what impact does not compare (sampling settings, the model file).
    return line.replace(" untouched", " untouched, which can replay from the call cache"
                        f" ({kept} calls of {baseline.label.split(' (')[0]} kept)", 1)
