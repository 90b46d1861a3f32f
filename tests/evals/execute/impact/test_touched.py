"""What a change touches: today's composed contexts, model, settings and plan against a
baseline's, with the capability each changed line and tool belongs to."""

from dataclasses import replace

import pytest

from app.capabilities import REGISTRY
from evals.execute.agent import agent_info, all_contexts
from evals.execute.impact import Baseline, impact
from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings, FrozenContext
from tests.evals.execute.impact.helpers import GIT, SETTINGS, plan_of, schema

# Two anonymous cases, a student's and two staff cases on the home page.
IDS = ("no-glowforge", "no-cnc-router", "student-gets-no-staff-tools",
       "staff-lists-open-tickets", "staff-resolve-proposes-card")
STAFF = {"staff-lists-open-tickets", "staff-resolve-proposes-card"}


@pytest.fixture
def cases():
    found = [c for c in load_cases() if c.id in IDS]
    assert len(found) == len(IDS)
    assert {c.id for c in found if c.context.as_ == "staff"} == STAFF
    return found


async def baseline_of(env, items, model="m"):
    agent = agent_info(model, SETTINGS, await all_contexts(env, items), GIT)
    return Baseline("run r1", agent, plan_of(items))


async def today(env, items, model="m", settings=SETTINGS, plan=None, baseline=None):
    env.composed.clear()  # compose afresh, as a new process would
    fragments: dict[str, dict[str, str]] = {}
    contexts = await all_contexts(env, items, fragments)
    return impact(contexts, items, plan or plan_of(items), model, settings, baseline,
                  fragments)


def replace_capability(monkeypatch, name, **changes):
    cap = REGISTRY.capabilities[name]
    monkeypatch.setitem(REGISTRY.capabilities, name, replace(cap, **changes))


async def test_an_unchanged_agent_touches_nothing(env, cases):
    base = await baseline_of(env, cases)
    result = await today(env, cases, baseline=base)
    assert not result.touched and not result.changed and not result.reasons
    assert not result.inputs and not result.notes and not result.unknown
    assert (result.total, result.contexts_compared) == (5, 3)


async def test_a_staff_only_fragment_touches_the_staff_items_and_names_it(env, cases,
                                                                         monkeypatch):
    base = await baseline_of(env, cases)
    cap = REGISTRY.capabilities["maintenance"]
    replace_capability(monkeypatch, "maintenance", prompt=lambda ctx: cap.prompt(ctx).replace(
        "never describe tickets you have not read", "never describe a ticket unread"))
    result = await today(env, cases, baseline=base)
    assert result.touched == STAFF
    (change,) = result.changed
    assert change.where == "staff on /" and set(change.items) == STAFF and not change.tools
    (fragment,) = change.prompt
    assert fragment.capability == "maintenance"
    assert any(line.startswith("-") and "tickets you have not read" in line
               for line in fragment.diff)
    assert any(line.startswith("+") and "a ticket unread" in line for line in fragment.diff)


async def test_a_changed_tool_schema_names_the_tool_and_its_capability(env, cases,
                                                                      monkeypatch):
    base = await baseline_of(env, cases)
    cap = REGISTRY.capabilities["maintenance"]
    tools = tuple(replace(t, description=t.description + " Say which ticket.")
                  if t.name == "update_ticket" else t for t in cap.tools)
    replace_capability(monkeypatch, "maintenance", tools=tools)
    result = await today(env, cases, baseline=base)
    assert result.touched == STAFF
    (change,) = result.changed
    assert not change.prompt
    (tool,) = change.tools
    assert (tool.name, tool.capability, tool.what) == \
        ("update_ticket", "maintenance", "description changed")
    assert any(line.startswith("+") and "Say which ticket." in line for line in tool.diff)


async def test_a_changed_case_touches_that_item_and_a_new_one_is_touched_too(env, cases):
    base = await baseline_of(env, [c for c in cases if c.id != "no-cnc-router"])
    edited = [c.model_copy(update={"prompt": c.prompt + " Please."})
              if c.id == "no-glowforge" else c for c in cases]
    result = await today(env, edited, baseline=base)
    assert result.touched == {"no-glowforge", "no-cnc-router"} and not result.changed
    assert dict(result.reasons) == {
        "its own plan entry changed (the case or scenario was edited)": ("no-glowforge",),
        "new since the baseline": ("no-cnc-router",)}
    result = await today(env, edited[1:], baseline=base)
    assert result.removed == ("no-glowforge",)


async def test_a_changed_model_or_settings_touches_every_item(env, cases):
    base = await baseline_of(env, cases)
    result = await today(env, cases, model="m2", baseline=base)
    assert result.touched == set(IDS)
    ((why, ids),) = result.reasons
    assert why == "the chat model changed (m → m2)" and set(ids) == set(IDS)
    result = await today(env, cases, settings=AgentSettings(max_tool_steps=2), baseline=base)
    assert result.touched == set(IDS)
    assert result.reasons[0][0] == \
        "the agent's settings changed (max_tool_steps 6 → max_tool_steps 2)"


async def test_a_changed_judge_touches_the_judged_items_and_other_plan_changes_none(env):
    judged = [c for c in load_cases() if c.rubric][:1]
    plain = [c for c in load_cases() if c.id == "no-glowforge"]
    items = judged + plain
    old = plan_info(items, judge_model="j1", judge_prompt_hash="h", repeat=1)
    agent = agent_info("m", SETTINGS, await all_contexts(env, items), GIT)
    new = plan_info(items, judge_model="j2", judge_prompt_hash="h", repeat=2)
    result = await today(env, items, plan=new, baseline=Baseline("point p", agent, old))
    assert result.touched == {judged[0].id}
    assert result.notes == ("repetitions changed: 1 -> 2",)


def test_no_baseline_touches_nothing_and_says_so(cases):
    result = impact({}, cases, plan_of(cases), "m", SETTINGS, None)
    assert result.baseline is None and not result.touched and result.total == 5


def test_contexts_not_composed_yet_are_counted_apart_and_new_ones_touched(cases):
    ctx = FrozenContext(system_prompt="p", tools=[])
    keys = {c.context.key for c in cases}
    anonymous = next(c.context.key for c in cases if c.context.as_ is None)
    agent = agent_info("m", SETTINGS, {k: ctx for k in keys if k != anonymous}, GIT)
    base = Baseline("run r1", agent, plan_of(cases))
    # Today: the anonymous context is new, the staff one is not composed yet.
    staff = next(c.context.key for c in cases if c.context.as_ == "staff")
    now = {k: ctx for k in keys if k != staff}
    result = impact(now, cases, plan_of(cases), "m", SETTINGS, base)
    assert {c.where for c in result.changed} == {"anonymous on /"}
    assert result.changed[0].new and not result.changed[0].prompt
    assert set(result.unknown) == STAFF
    assert result.touched == {"no-glowforge", "no-cnc-router"}


def test_the_same_tools_in_another_order_are_a_change_of_their_context():
    tools = [schema("search_catalog"), schema("report_issue")]
    ctx = FrozenContext(system_prompt="p", tools=tools)
    items = [c for c in load_cases() if c.id == "no-glowforge"]
    key = items[0].context.key
    base = Baseline("run r1", agent_info("m", SETTINGS, {key: ctx}, GIT), plan_of(items))
    moved = ctx.model_copy(update={"tools": tools[::-1]})
    (change,) = impact({key: moved}, items, plan_of(items), "m", SETTINGS, base).changed
    assert change.order_changed and not change.tools and change.items == ("no-glowforge",)

