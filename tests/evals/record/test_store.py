import json

import pytest

from app.db import scratch_database
from evals.execute.session import Prepared, Version, all_contexts, run_versions
from evals.load.cases import load_cases, select
from evals.record.fingerprint import plan_info
from evals.record.results import RunRecord
from evals.record.store import Point, RunStore, StoreError
from tests.fakes import ScriptedModel, say


@pytest.fixture
async def store(server_conninfo):
    async with scratch_database(server_conninfo, prefix="test_store") as info, \
            RunStore.open(info) as s:
        yield s


def cases(spec="no-glowforge,no-cnc-router"):
    return select(load_cases(), spec)


def plan(cs, repeat=1):
    return plan_info(cs, judge_model=None, judge_prompt_hash=None, repeat=repeat)


async def test_a_run_round_trips_through_json_and_postgres(env, store, settings):
    cs = cases()
    prep = Prepared(env, store, settings)
    model = ScriptedModel(say("We don't have a Glowforge."), repeat=True)
    records = await run_versions(prep, cs, [Version("current", model)], plan(cs, 2),
                                 concurrency=2, vision=None, judge=None, settings_extra={})
    record = records["current"]
    assert record.status == "complete" and len(record.cases) == 4
    assert [(r.id, r.repetition) for r in record.cases] == [
        ("no-glowforge", 1), ("no-glowforge", 2), ("no-cnc-router", 1), ("no-cnc-router", 2)]
    loaded = await store.load_run(record.run_id[:6])  # a unique prefix does
    assert loaded.model_dump() == record.model_dump()
    again = RunRecord.model_validate_json(record.model_dump_json())
    assert again == record
    rows = await store.db.fetch("SELECT count(*) AS n FROM eval_checks WHERE run_id = %s",
                                (record.run_id,))
    assert rows[0]["n"] == sum(len(a.checks) for r in record.cases for a in r.attempts)
    listed = await store.list_runs()
    assert listed[0]["id"] == record.run_id and listed[0]["totals"]["cases"] == 4
    assert record.agent.git_commit is None or len(record.agent.git_commit) == 40
    assert record.plan.repeat == 2 and set(record.plan.cases) == {c.id for c in cs}


async def test_each_case_is_stored_the_moment_it_finishes(env, store, settings):
    import asyncio

    cs = cases()
    seen: list[tuple[int, str]] = []

    class Probing(ScriptedModel):
        async def complete(self, messages, tools=None, **kw):
            if self.requests:  # the second case: wait for the first to be in the store
                for _ in range(100):
                    rows = await store.db.fetch(
                        "SELECT count(*) AS n, min(r.status) AS status FROM eval_cases c"
                        " JOIN eval_runs r ON r.id = c.run_id")
                    if rows[0]["n"]:
                        break
                    await asyncio.sleep(0.02)
                seen.append((rows[0]["n"], rows[0]["status"]))
            self.requests.append(messages)
            return say("We don't have that.")

    records = await run_versions(Prepared(env, store, settings), cs,
                                 [Version("current", Probing())], plan(cs), concurrency=1,
                                 vision=None, judge=None, settings_extra={})
    assert seen == [(1, "running")]  # stored while the run was still running
    head = await store.db.fetchone("SELECT status FROM eval_runs WHERE id = %s",
                                   (records["current"].run_id,))
    assert head["status"] == "complete"


async def test_points_are_saved_listed_and_unknown_names_refused(env, store, settings):
    from evals.record.fingerprint import agent_info

    cs = cases()
    agent = agent_info("scripted/fake", {}, await all_contexts(env, cs))
    p = Point(name="base", created="2026-11-30", plan=plan(cs), agent=agent)
    await store.save_point(p)
    assert (await store.load_point("base")) == p
    assert [r["name"] for r in await store.list_points()] == ["base"]
    with pytest.raises(StoreError, match="exists already"):
        await store.save_point(p)
    with pytest.raises(StoreError, match="no comparison point 'nope'; points: base"):
        await store.load_point("nope")
    with pytest.raises(StoreError, match="no stored run 'zzz'"):
        await store.load_run("zzz")
    assert await store.find_point("scripted/fake", p.plan.fingerprint) == p


async def test_a_frozen_agent_is_run_as_it_was_told(env, store, settings):
    from evals.record.fingerprint import FrozenContext, agent_info, context_key

    cs = cases("no-glowforge")
    key = context_key(cs[0])
    contexts = await all_contexts(env, cs)
    old = contexts[key].model_copy(update={"system_prompt": "OLD PROMPT"})
    old.tools[0]["function"]["description"] = "OLD DESCRIPTION"
    frozen = agent_info("scripted/fake", {}, {key: FrozenContext(**old.model_dump())})
    baseline = ScriptedModel(say("We don't have a Glowforge."))
    current = ScriptedModel(say("We don't have a Glowforge."))
    await run_versions(Prepared(env, store, settings), cs,
                       [Version("baseline", baseline, frozen), Version("current", current)],
                       plan(cs), concurrency=2, vision=None, judge=None, settings_extra={})
    sent = baseline.requests[0]
    assert sent["messages"][0]["content"] == "OLD PROMPT"
    assert sent["tools"][0]["function"]["description"] == "OLD DESCRIPTION"
    assert current.requests[0]["messages"][0]["content"] != "OLD PROMPT"


async def test_a_frozen_agent_whose_tool_is_gone_is_refused(env, store, settings):
    from evals.execute.runner import FrozenAgentError
    from evals.record.fingerprint import FrozenContext, agent_info, context_key

    cs = cases("no-glowforge")
    ctx = FrozenContext(system_prompt="x", tools=[
        {"type": "function", "function": {"name": "removed_tool", "description": "d",
                                          "parameters": {}}}])
    frozen = agent_info("scripted/fake", {}, {context_key(cs[0]): ctx})
    with pytest.raises(FrozenAgentError, match="'removed_tool' no longer exists"):
        await run_versions(Prepared(env, store, settings), cs,
                           [Version("baseline", ScriptedModel(), frozen)], plan(cs),
                           concurrency=1, vision=None, judge=None, settings_extra={})
    assert json.dumps(ctx.model_dump())  # the refusal happened before any run was stored
    assert await store.list_runs() == []


async def test_the_store_is_redacted_like_the_artifact(env, store, settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-store-secret-123")
    cs = cases("no-glowforge")
    model = ScriptedModel(say("We don't have a Glowforge (sk-store-secret-123)."))
    records = await run_versions(Prepared(env, store, settings), cs,
                                 [Version("current", model)], plan(cs), concurrency=1,
                                 vision=None, judge=None, settings_extra={})
    rows = await store.db.fetch("SELECT answer FROM eval_attempts")
    stored = await store.db.fetch("SELECT result::text AS r FROM eval_cases")
    assert "sk-store-secret-123" not in rows[0]["answer"] + stored[0]["r"]
    assert "[redacted]" in rows[0]["answer"]
    head = await store.db.fetchone("SELECT agent_fingerprint FROM eval_runs")
    assert head["agent_fingerprint"] == records["current"].agent.fingerprint
