"""Which items today's agent and plan would ask the model something a baseline was not asked,
and why, before the run.

An item is touched when what the model is told in its context changed (the composed system
prompt or a tool schema), when the chat model or the agent's settings changed (every item),
when its own plan entry changed or it is new since the baseline, for a judged item when the
judge changed, or when an input its request may carry changed (a photo, a manual, a catalogue
record, a ticket, a person: inputs.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.identity import AUDIENCES
from evals.execute.impact.baseline import Baseline
from evals.execute.impact.context import context_diff
from evals.execute.impact.inputs import InputChange, input_changes
from evals.load.context import Context
from evals.load.items import EvalItem
from evals.record.comparison import FragmentDiff, ToolDiff
from evals.record.fingerprint import AgentSettings, FrozenContext, PlanInfo


@dataclass(frozen=True)
class ContextChange:
    """One context (audience × page × catalogue) whose system prompt or tools changed."""

    key: str
    where: str  # "staff on /tools/prusa-mk4"
    new: bool  # the baseline has no such context
    prompt: tuple[FragmentDiff, ...]
    tools: tuple[ToolDiff, ...]
    order_changed: bool  # the same tools, sent in another order
    items: tuple[str, ...]


@dataclass(frozen=True)
class Impact:
    """What a change touches, per context, per input and per other reason."""

    baseline: Baseline | None
    total: int
    contexts_compared: int = 0
    changed: tuple[ContextChange, ...] = ()
    inputs: tuple[InputChange, ...] = ()
    # Other reasons, each with the items it touches: (why, item ids).
    reasons: tuple[tuple[str, tuple[str, ...]], ...] = ()
    touched: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()  # items whose context is not composed yet (the lab's)
    notes: tuple[str, ...] = ()  # plan differences that change no request of an item
    removed: tuple[str, ...] = ()  # the baseline's items that today's plan does not have
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
    by_key: dict[str, list[str]] = {}
    context_of: dict[str, Context] = {}
    for item in items:
        by_key.setdefault(item.context.key, []).append(item.id)
        context_of.setdefault(item.context.key, item.context)

    changed: list[ContextChange] = []
    for key in sorted(by_key, key=lambda k: _order(context_of[k])):
        now = contexts.get(key)
        if now is None:
            continue
        before = baseline.agent.contexts.get(key)
        if before == now:
            continue
        prompt, tools, order_changed = context_diff(
            before, now, fragments.get(key) if fragments is not None else None)
        changed.append(ContextChange(
            key=key, where=where_of(key), new=before is None, prompt=prompt,
            tools=tools, order_changed=order_changed, items=tuple(by_key[key])))

    inputs = input_changes(baseline.plan, plan, items)
    reasons = _reasons(items, plan, model, settings, baseline)
    touched = {i for _, group in reasons for i in group}
    touched |= {i for c in changed for i in c.items} | {i for c in inputs for i in c.items}
    unknown = tuple(i for key, group in by_key.items() if key not in contexts
                    for i in group if i not in touched)
    return Impact(
        baseline, len(items), contexts_compared=sum(1 for k in by_key if k in contexts),
        changed=tuple(changed), inputs=inputs, reasons=tuple(reasons),
        touched=frozenset(touched), unknown=unknown,
        notes=tuple(_plan_notes(plan, baseline.plan, inputs)),
        removed=tuple(sorted(set(baseline.plan.cases) - set(plan.cases))), kinds=kinds)


def _reasons(items: Sequence[EvalItem], plan: PlanInfo, model: str, settings: AgentSettings,
             baseline: Baseline) -> list[tuple[str, tuple[str, ...]]]:
    """The reasons besides a context and an input: the model, the settings, the item's own
    entry, the judge."""
    ids = tuple(i.id for i in items)
    old_agent, old_plan = baseline.agent, baseline.plan
    out: list[tuple[str, tuple[str, ...]]] = []
    if old_agent.model != model:
        out.append((f"the chat model changed ({old_agent.model} → {model})", ids))
    if old_agent.settings != settings:
        out.append((f"the agent's settings changed ({settings_words(old_agent.settings)} →"
                    f" {settings_words(settings)})", ids))
    edited = tuple(i for i in ids if i in old_plan.cases and old_plan.cases[i] != plan.cases.get(i))
    if edited:
        out.append(("its own plan entry changed (the case or scenario was edited)", edited))
    new = tuple(i for i in ids if i not in old_plan.cases)
    if new:
        out.append(("new since the baseline", new))
    if old_plan.judge != plan.judge:
        judged = tuple(i.id for i in items if i.judged)
        if judged:
            out.append((f"the judge changed ({_judge(old_plan)} → {_judge(plan)})", judged))
    return out


def settings_words(s: AgentSettings) -> str:
    """The agent's settings for a person: "max_tool_steps 6"."""
    return ", ".join(f"{k} {v}" for k, v in s.model_dump(exclude_none=True).items())


def where_of(key: str) -> str:
    """A context key ("staff /tools/form-4 demo") as a person says it ("staff on …")."""
    who, page, catalog = (key.split(" ") + ["", ""])[:3]
    return f"{who} on {page or '?'}" + {"lab": " (look-alike lab)", "large": " (large lab)"}.get(
        catalog, "")


def _judge(plan: PlanInfo) -> str:
    j = plan.judge
    return f"{j.model or 'none'}, prompt {j.prompt_hash or 'none'}"


def _plan_notes(plan: PlanInfo, old: PlanInfo, inputs: Sequence[InputChange]) -> list[str]:
    """What else differs in the plan: none of it changes what the chat model is asked (a
    fixture whose change an input carries into a request is said with that input)."""
    carried = {f"fixture changed: {source}" for c in inputs for source in c.sources}
    return [line for line in plan.changes_since(old)
            if line.startswith(("fixture changed", "harness changed", "repetitions changed"))
            and line not in carried]


def _order(ctx: Context) -> tuple[int, str, str]:
    who = ctx.as_ or "anonymous"
    return (AUDIENCES.index(who) if who in AUDIENCES else len(AUDIENCES), ctx.page_path,
            ctx.catalog)
