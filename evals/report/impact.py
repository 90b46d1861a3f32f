"""The impact of a change, before the run: which items today's agent and plan would ask the
model something a baseline (a stored run, or a comparison point) was not asked, and why.

An item is touched when what the model is told in its context changed (the composed system
prompt or a tool schema), when the chat model or the agent's settings changed (every item),
when its own plan entry changed or it is new since the baseline, or, for a judged item, when
the judge changed. A baseline stores only each context's whole prompt, so a changed prompt is
diffed line by line and each hunk put down to the capability whose fragment today holds its
lines (removed text to the capability it was next to); a tool is put down to the capability
that registers it.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from app.capabilities import REGISTRY
from app.identity import AUDIENCES
from evals.load.context import Context
from evals.load.items import EvalItem
from evals.record.artifact import ArtifactError
from evals.record.comparison import WHOLE_PROMPT
from evals.record.fingerprint import AgentInfo, AgentSettings, FrozenContext, PlanInfo
from evals.record.store import RunStore, StoreError
from evals.settings import eval_settings

NO_BASELINE = "no earlier complete run under this plan: every item calls the model"
DIFF_LINES = 6  # changed lines shown per capability (or tool), the rest counted
LINE_CHARS = 100  # a diff line longer than this is cut
CONTEXT_CHARS = 30  # the unchanged text shown before a changed line's first difference
ITEMS_SHOWN = 8  # item ids listed per group, the rest counted


@dataclass(frozen=True)
class Baseline:
    """What today is compared with: a label for a person, and its agent and plan."""

    label: str  # "run 3f2a9c1b0d4e (…)", "point before-fix"
    agent: AgentInfo
    plan: PlanInfo
    run_id: str | None = None  # a stored run's id
    # The runs whose calls it made or replayed: where its calls are in the call cache.
    call_runs: tuple[str, ...] = ()


@dataclass(frozen=True)
class FragmentChange:
    """The changed lines of one capability's fragment ("-" removed, "+" added)."""

    capability: str
    diff: tuple[str, ...]
    more: int = 0  # changed lines not shown

    @property
    def removed_only(self) -> bool:
        return all(line.startswith("-") for line in self.diff) and not self.more


@dataclass(frozen=True)
class ToolChange:
    """A tool added, removed or changed in one context, and the capability it belongs to."""

    name: str
    capability: str | None  # None: no capability registers it today
    what: str  # "added", "removed", "description changed", "parameters changed: …"
    diff: tuple[str, ...] = ()
    more: int = 0


@dataclass(frozen=True)
class ContextChange:
    """One context (audience × page × catalogue) whose system prompt or tools changed."""

    key: str
    where: str  # "staff on /tools/prusa-mk4"
    new: bool  # the baseline has no such context
    prompt: tuple[FragmentChange, ...]
    tools: tuple[ToolChange, ...]
    order_changed: bool  # the same tools, sent in another order
    items: tuple[str, ...]


@dataclass(frozen=True)
class Impact:
    """What a change touches, per context and per other reason."""

    baseline: Baseline | None
    total: int
    contexts_compared: int = 0
    changed: tuple[ContextChange, ...] = ()
    # Other reasons, each with the items it touches: (why, item ids).
    reasons: tuple[tuple[str, tuple[str, ...]], ...] = ()
    touched: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()  # items whose context is not composed yet (the lab's)
    notes: tuple[str, ...] = ()  # plan differences that change no request of an item
    kinds: Mapping[str, str] = field(default_factory=dict)  # item id -> "case" | "scenario"


def impact(contexts: Mapping[str, FrozenContext], items: Sequence[EvalItem], plan: PlanInfo,
           model: str, settings: AgentSettings, baseline: Baseline | None,
           fragments: Mapping[str, Mapping[str, str]] | None = None) -> Impact:
    """What today's contexts, model, settings and plan touch against the baseline.

    `contexts` are today's composed contexts by key (an item whose context is missing, the
    lab's before the run seeds it, is counted as not known yet unless another reason touches
    it); `fragments`, each context's capability fragments by name, lets a prompt change be
    put down to a capability (without it, to the system prompt as a whole)."""
    kinds = {i.id: "case" if i.single_turn else "scenario" for i in items}
    if baseline is None:
        return Impact(None, len(items), kinds=kinds)
    ids = [i.id for i in items]
    by_key: dict[str, list[str]] = {}
    context_of: dict[str, Context] = {}
    for item in items:
        by_key.setdefault(item.context.key, []).append(item.id)
        context_of.setdefault(item.context.key, item.context)
    old_agent, old_plan = baseline.agent, baseline.plan

    reasons: list[tuple[str, tuple[str, ...]]] = []
    if old_agent.model != model:
        reasons.append((f"the chat model changed ({old_agent.model} → {model})", tuple(ids)))
    if old_agent.settings != settings:
        reasons.append((f"the agent's settings changed ({settings_words(old_agent.settings)} →"
                        f" {settings_words(settings)})", tuple(ids)))
    edited = tuple(i for i in ids if i in old_plan.cases and old_plan.cases[i] != plan.cases.get(i))
    if edited:
        reasons.append(("its own plan entry changed (the case or scenario was edited)", edited))
    new = tuple(i for i in ids if i not in old_plan.cases)
    if new:
        reasons.append(("new since the baseline", new))
    if old_plan.judge != plan.judge:
        judged = tuple(i.id for i in items if i.judged)
        if judged:
            reasons.append((f"the judge changed ({_judge(old_plan)} → {_judge(plan)})",
                            judged))

    changed: list[ContextChange] = []
    for key in sorted(by_key, key=lambda k: _order(context_of[k])):
        now = contexts.get(key)
        if now is None:
            continue
        before = old_agent.contexts.get(key)
        if before == now:
            continue
        prompt, tools, order_changed = context_diff(
            before, now, fragments.get(key) if fragments is not None else None)
        changed.append(ContextChange(
            key=key, where=_where(context_of[key]), new=before is None, prompt=prompt,
            tools=tools, order_changed=order_changed, items=tuple(by_key[key])))

    touched = {i for _, group in reasons for i in group}
    touched |= {i for c in changed for i in c.items}
    unknown = tuple(i for key, group in by_key.items() if key not in contexts
                    for i in group if i not in touched)
    return Impact(
        baseline, len(items), contexts_compared=sum(1 for k in by_key if k in contexts),
        changed=tuple(changed), reasons=tuple(reasons), touched=frozenset(touched),
        unknown=unknown, notes=tuple(_plan_notes(plan, old_plan)), kinds=kinds)


def context_diff(before: FrozenContext | None, now: FrozenContext,
                 fragments: Mapping[str, str] | None = None
                 ) -> tuple[tuple[FragmentChange, ...], tuple[ToolChange, ...], bool]:
    """What differs in one context: the prompt's changed lines by capability (`fragments`,
    today's by name, say whose), the tools changed, and whether only the tools' order did.
    A context the baseline lacks (`before` None) has no diff, only its tools' order."""
    tools, order_changed = _tool_changes(before.tools if before else [], now.tools)
    if before is None:
        return (), (), order_changed
    return _prompt_changes(before.system_prompt, now.system_prompt, fragments), tools, \
        order_changed


def settings_words(s: AgentSettings) -> str:
    """The agent's settings for a person: "max_tool_steps 6"."""
    return ", ".join(f"{k} {v}" for k, v in s.model_dump(exclude_none=True).items())


def _judge(plan: PlanInfo) -> str:
    j = plan.judge
    return f"{j.model or 'none'}, prompt {j.prompt_hash or 'none'}"


def _plan_notes(plan: PlanInfo, old: PlanInfo) -> list[str]:
    """What else differs in the plan: none of it changes what the chat model is asked."""
    out = [line for line in plan.changes_since(old)
           if line.startswith(("fixture changed", "harness changed", "repetitions changed"))]
    removed = sorted(set(old.cases) - set(plan.cases))
    if removed:
        out.append(f"{len(removed)} item(s) of the baseline are not in today's plan:"
                   f" {id_list(tuple(removed))}")
    return out


def _order(ctx: Context) -> tuple[int, str, str]:
    who = ctx.as_ or "anonymous"
    return (AUDIENCES.index(who) if who in AUDIENCES else len(AUDIENCES), ctx.page_path,
            ctx.catalog)


def _where(ctx: Context) -> str:
    return where_of(ctx.key)


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


def _prompt_changes(old: str, new: str, fragments: Mapping[str, str] | None
                    ) -> tuple[FragmentChange, ...]:
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
    return tuple(FragmentChange(cap, tuple(diff[:DIFF_LINES]), max(len(diff) - DIFF_LINES, 0))
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


def _tool_changes(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
                  ) -> tuple[tuple[ToolChange, ...], bool]:
    """Tools added, removed or changed (by name), and whether only their order changed."""
    before = {str(_function(s).get("name", "")): _function(s) for s in old}
    now = {str(_function(s).get("name", "")): _function(s) for s in new}
    owner = {t.name: c.name for c in REGISTRY.ordered() for t in c.tools}
    out: list[ToolChange] = []
    for name in sorted(before.keys() | now.keys()):
        cap = owner.get(name)
        if name not in before:
            out.append(ToolChange(name, cap, "added"))
        elif name not in now:
            out.append(ToolChange(name, cap, "removed"))
        elif before[name] != now[name]:
            out.append(_tool_change(name, cap, before[name], now[name]))
    order_changed = not out and list(before) != list(now)
    return tuple(out), order_changed


def _tool_change(name: str, cap: str | None, old: dict[str, Any], new: dict[str, Any]
                 ) -> ToolChange:
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
    return ToolChange(name, cap, "; ".join(what), tuple(diff[:DIFF_LINES]),
                      max(len(diff) - DIFF_LINES, 0))


def _properties(params: object) -> dict[str, Any]:
    if not isinstance(params, dict):
        return {}
    props = params.get("properties")
    out = dict(props) if isinstance(props, dict) else {}
    rest = {k: v for k, v in params.items() if k != "properties"}
    if rest:
        out["(schema)"] = rest  # required, $defs, …: named as the schema's own part
    return out


# what a person reads ----------------------------------------------------------------------------

def summary(result: Impact) -> str:
    """The one line a run prints before it starts."""
    if result.baseline is None:
        return NO_BASELINE
    n = len(result.touched)
    parts = wheres([c.where for c in result.changed])
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


def where_of(key: str) -> str:
    """A context key ("staff /tools/form-4 demo") as a person says it ("staff on …")."""
    who, page, catalog = (key.split(" ") + ["", ""])[:3]
    return f"{who} on {page or '?'}" + {"lab": " (look-alike lab)", "large": " (large lab)"}.get(
        catalog, "")


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
    if result.reasons:
        out.append("touched for other reasons:")
        for why, ids in result.reasons:
            out.append(f"  {why}: " + (f"every item ({len(ids)})" if len(ids) == result.total
                                       else _items(ids, result.kinds)))
    if result.unknown:
        out.append(f"not known yet (their context is not composed):"
                   f" {_items(result.unknown, result.kinds)}")
    out += [f"also in the plan (no request changes): {note}" for note in result.notes]
    out.append(summary(result))
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
    for f in c.prompt:
        out.append(f"    {f.capability}:")
        out += [f"      {line}" for line in f.diff]
        if f.more:
            out.append(f"      … {f.more} more changed line(s)")
    for t in c.tools:
        out.append(f"    tool {t.name} ({t.capability or 'no capability registers it'}):"
                   f" {t.what}")
        out += [f"      {line}" for line in t.diff]
        if t.more:
            out.append(f"      … {t.more} more changed line(s)")
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


# the baseline in the store -----------------------------------------------------------------

async def last_baseline(store: RunStore, plan: PlanInfo) -> Baseline | None:
    """The newest complete stored run under this plan, as a baseline (None: there is none)."""
    run_id = await store.last_complete_run(plan.fingerprint)
    return await run_baseline(store, run_id) if run_id is not None else None


async def run_baseline(store: RunStore, ref: str) -> Baseline:
    """A stored run (an id or a unique prefix) as a baseline; StoreError when it is unknown,
    ambiguous, or has no plan and agent."""
    run = await store.load_run(ref)
    if run.plan is None or run.agent is None:
        raise StoreError(f"run {run.run_id} records no plan or agent: nothing to compare with")
    status = "" if run.status == "complete" else f", {run.status}"
    runs = {run.run_id or ""} | {r for case in run.cases for a in case.attempts
                                 for r in a.calls.replayed_from}
    return Baseline(f"run {run.run_id} (started {(run.started or '?')[:16]}{status})", run.agent,
                    run.plan, run.run_id, tuple(sorted(runs - {""})))


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
