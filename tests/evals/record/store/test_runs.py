"""Runs in the store (evals/record/store/runs.py): a run round-trips through the store and
its artifact, redacted alike; older runs load through the one reader; the last complete run
under a plan; an id PostgreSQL could not take is not found."""

import pytest

from evals.execute.session import Prepared, Version
from evals.record.run import RunRecord
from evals.record.store import StoreError
from tests.evals.execute.helpers import cases, plan, run
from tests.evals.record.helpers import left_unfinished
from tests.fakes import ScriptedModel, say


async def test_a_run_round_trips_through_json_and_postgres(env, store, settings):
    cs = cases()
    prep = Prepared(env, store, settings)
    model = ScriptedModel(say("We don't have a Glowforge."), repeat=True)
    records = await run(prep, cs, [Version("current", model)], plan(cs, 2), concurrency=2)
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
    assert listed[0].id == record.run_id and listed[0].totals.cases == 4
    assert record.agent.git_commit is None or len(record.agent.git_commit) == 40
    assert record.plan.repeat == 2 and set(record.plan.cases) == {c.id for c in cs}


async def test_the_store_is_redacted_like_the_artifact(env, store, settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-store-secret-123")
    cs = cases("no-glowforge")
    model = ScriptedModel(say("We don't have a Glowforge (sk-store-secret-123)."))
    records = await run(Prepared(env, store, settings), cs, [Version("current", model)],
                        plan(cs))
    rows = await store.db.fetch("SELECT answer FROM eval_attempts")
    stored = await store.db.fetch("SELECT result::text AS r FROM eval_cases")
    assert "sk-store-secret-123" not in rows[0]["answer"] + stored[0]["r"]
    assert "[redacted]" in rows[0]["answer"]
    head = await store.db.fetchone("SELECT agent_fingerprint FROM eval_runs")
    assert head["agent_fingerprint"] == records["current"].agent.fingerprint


async def test_a_run_stored_by_an_older_harness_loads_through_the_one_reader(store):
    from psycopg.types.json import Jsonb

    from tests.evals.record.helpers import v2_data

    data = v2_data()  # tests/evals/record/data/v2-run.json.gz
    header = {k: v for k, v in data.items() if k != "cases"}
    await store.db.execute(  # as the harness wrote it: running, its cases, then complete
        "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint,"
        " header) VALUES (%s, 'running', 'openai/fake', %s, %s, %s)",
        ("oldrun000001", data["plan"]["fingerprint"], data["agent"]["fingerprint"],
         Jsonb(header)))
    for case in data["cases"]:
        await store.db.execute(
            "INSERT INTO eval_cases (run_id, case_id, repetition, file, status, result)"
            " VALUES ('oldrun000001', %s, %s, %s, %s, %s)",
            (case["id"], case["repetition"], case["file"], case["status"], Jsonb(case)))
    await store.db.execute("UPDATE eval_runs SET status = 'complete' WHERE id = 'oldrun000001'")
    record = await store.load_run("oldrun")
    assert record.version == 3 and len(record.cases) == len(data["cases"])
    assert [c.id for c in record.cases] == [c["id"] for c in data["cases"]]
    assert record.models.chat == "openai/fake"


async def test_the_last_complete_run_under_a_plan(env, store, settings):
    cs = cases()
    assert await store.last_complete_run(plan(cs).fingerprint) is None
    prep = Prepared(env, store, settings)
    model = ScriptedModel(say("We don't have that."), repeat=True)
    await run(prep, cs, [Version("current", model)], plan(cs))
    second = (await run(prep, cs, [Version("current", model)], plan(cs)))["current"]
    await run(prep, cs, [Version("current", model)], plan(cs, 2))  # another plan
    assert await store.last_complete_run(plan(cs).fingerprint) == second.run_id
    # a newer run under the plan that is not complete is passed over
    await left_unfinished(store, second, lambda c: True, status="interrupted")
    assert await store.last_complete_run(plan(cs).fingerprint) == second.run_id


async def test_an_id_with_a_nul_is_not_found_rather_than_sent_to_postgres(store):
    # PostgreSQL takes no NUL in a query's text: the store answers as for any unknown id
    with pytest.raises(StoreError, match="no stored run 'ab\\\\x00'"):
        await store.load_run("ab\x00")
    with pytest.raises(StoreError, match="no comparison 'c\\\\x00'"):
        await store.load_comparison("c\x00")
