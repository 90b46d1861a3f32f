"""The impact of a change: today's composed contexts, model, settings and plan against a
baseline's, with the capability each changed line and tool belongs to."""

from dataclasses import replace

import pytest
from psycopg.types.json import Jsonb

from app.capabilities import REGISTRY
from evals.execute.agent import agent_info, all_contexts
from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.record.fingerprint import AgentSettings, FrozenContext
from evals.record.run import RunRecord
from evals.record.store import StoreError
from evals.report.impact import (
    NO_BASELINE,
    Baseline,
    _prompt_changes,
    _tool_changes,
    impact,
    render,
    run_baseline,
    run_summary,
    summary,
)

SETTINGS = AgentSettings(max_tool_steps=6)
GIT = ("abc", False)
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


def plan_of(items):
    return plan_info(items, judge_model=None, judge_prompt_hash=None, repeat=1)


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
    lines = render(result)
    assert lines[0].startswith("against run r1: agent ")
    assert "contexts: 0 of 3 changed" in lines
    assert lines[-1] == summary(result) == "this change touches 0 of 5 items; 5 untouched"


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
    lines = render(result)
    assert "  staff on /: system prompt changed in maintenance" in lines
    assert "    maintenance:" in lines
    assert lines[-1] == "this change touches 2 of 5 items (staff on /); 3 untouched"


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
    lines = render(result)
    assert "  staff on /: tools changed: update_ticket (maintenance)" in lines
    assert "    tool update_ticket (maintenance): description changed" in lines


async def test_a_changed_case_touches_that_item_and_a_new_one_is_touched_too(env, cases):
    base = await baseline_of(env, [c for c in cases if c.id != "no-cnc-router"])
    edited = [c.model_copy(update={"prompt": c.prompt + " Please."})
              if c.id == "no-glowforge" else c for c in cases]
    result = await today(env, edited, baseline=base)
    assert result.touched == {"no-glowforge", "no-cnc-router"} and not result.changed
    assert dict(result.reasons) == {
        "its own plan entry changed (the case or scenario was edited)": ("no-glowforge",),
        "new since the baseline": ("no-cnc-router",)}
    lines = render(result)
    assert "  its own plan entry changed (the case or scenario was edited): 1 case" \
        " (no-glowforge)" in lines
    assert lines[-1] == "this change touches 2 of 5 items (1 edited; 1 new); 3 untouched"


async def test_a_changed_model_or_settings_touches_every_item(env, cases):
    base = await baseline_of(env, cases)
    result = await today(env, cases, model="m2", baseline=base)
    assert result.touched == set(IDS)
    assert "  the chat model changed (m → m2): every item (5)" in render(result)
    assert summary(result) == \
        "this change touches 5 of 5 items (the chat model changed); 0 untouched"
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
    assert "also in the plan (no request changes): repetitions changed: 1 -> 2" in \
        render(result)


def test_no_baseline_says_every_item_calls_the_model(cases):
    result = impact({}, cases, plan_of(cases), "m", SETTINGS, None)
    assert render(result) == [NO_BASELINE]
    assert summary(result) == \
        "no earlier complete run under this plan: every item calls the model"


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
    assert result.changed[0].new
    assert set(result.unknown) == STAFF
    assert "  anonymous on /: new: the baseline has no such context" in render(result)
    assert summary(result) == ("this change touches 2 of 5 items (anonymous on /); 1"
                               " untouched; 2 not known yet (the look-alike lab's contexts"
                               " are composed once it is seeded)")


def test_removed_text_is_put_near_its_capability_and_unknown_fragments_on_the_prompt():
    fragments = {"a": "A one\nA two", "b": "B one"}
    old = "A one\nA two\nA gone\n\nB one"
    new = "A one\nA two\n\nB one"
    (change,) = _prompt_changes(old, new, fragments)
    assert change.capability == "removed text (near a)" and change.diff == ("-A gone",)
    assert change.removed_only
    # the first line of a fragment removed: after a separator, so the fragment it began
    (change,) = _prompt_changes("A one\nA two\n\nB gone\nB one", new, fragments)
    assert change.capability == "removed text (near b)" and change.diff == ("-B gone",)
    (change,) = _prompt_changes("x\ny", "x\nz", None)
    assert change.capability == "system prompt" and change.diff == ("-y", "+z")
    (change,) = _prompt_changes("x", "x\n", None)
    assert change.diff == ("(whitespace only)",)
    many = "\n".join(f"line {n}" for n in range(20))
    (change,) = _prompt_changes("", many, {"a": many})
    assert len(change.diff) == 6 and change.more == 14 and not change.removed_only


def test_a_long_changed_line_is_shown_from_a_little_before_its_difference():
    start = "word " * 30
    (change,) = _prompt_changes(start + "old end", start + "new end", None)
    assert change.diff[0].startswith("-…") and change.diff[0].endswith("old end")
    assert change.diff[1].startswith("+…") and change.diff[1].endswith("new end")


def schema(name, description="d", **props):
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props}}}


def test_tools_added_removed_and_changed_by_name():
    old = [schema("search_catalog"), schema("report_issue", q={"type": "string"}),
           schema("gone_tool")]
    new = [schema("report_issue", q={"type": "integer"}), schema("search_catalog"),
           schema("update_ticket")]
    changes, order = _tool_changes(old, new)
    assert not order
    assert [(t.name, t.capability, t.what) for t in changes] == [
        ("gone_tool", None, "removed"),
        ("report_issue", "issue_reports", "parameters changed: q"),
        ("update_ticket", "maintenance", "added")]
    changes, order = _tool_changes(old[:2], old[1::-1])
    assert changes == () and order
    ctx = FrozenContext(system_prompt="p", tools=old[:2])
    items = [c for c in load_cases() if c.id == "no-glowforge"]
    key = items[0].context.key
    base = Baseline("run r1", agent_info("m", SETTINGS, {key: ctx}, GIT), plan_of(items))
    moved = ctx.model_copy(update={"tools": old[1::-1]})
    lines = render(impact({key: moved}, items, plan_of(items), "m", SETTINGS, base))
    assert "  anonymous on /: the same tools in another order" in lines
    odd = {**schema("search_catalog"), "strict": True}
    odd["function"] = {**odd["function"], "strict": True}
    (change,), _ = _tool_changes([schema("search_catalog")], [odd])
    assert change.what == "strict changed"


async def test_the_run_summary_says_when_the_store_cannot_tell(store, cases):
    line = await run_summary(store, {}, cases, plan_of(cases), "m", SETTINGS)
    assert line == NO_BASELINE

    async def broken(plan_fingerprint):
        raise TimeoutError("the store did not answer in 10 s")

    store.last_complete_run = broken
    line = await run_summary(store, {}, cases, plan_of(cases), "m", SETTINGS)
    assert line == "impact: not known (TimeoutError: the store did not answer in 10 s)"


async def test_a_stored_run_without_plan_or_agent_is_no_baseline(store):
    header = RunRecord(run_id="0ld000000000").model_dump(mode="json", exclude={"cases"})
    await store.db.execute(
        "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint, header)"
        " VALUES ('0ld000000000', 'complete', 'm', '', '', %s)", (Jsonb(header),))
    with pytest.raises(StoreError, match="run 0ld000000000 records no plan or agent"):
        await run_baseline(store, "0ld")
