import json

import pytest

from evals.execute.agent import agent_info, all_contexts
from evals.execute.session import Prepared, Version
from evals.record.fingerprint import Point
from evals.record.run import RunRecord
from evals.record.store import StoreError
from tests.evals.execute.helpers import SETTINGS, cases, plan, run
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

    records = await run(Prepared(env, store, settings), cs, [Version("current", Probing())],
                        plan(cs))
    assert seen == [(1, "running")]  # stored while the run was still running
    head = await store.db.fetchone("SELECT status FROM eval_runs WHERE id = %s",
                                   (records["current"].run_id,))
    assert head["status"] == "complete"


async def test_points_are_saved_listed_and_unknown_names_refused(env, store, settings):
    cs = cases()
    agent = agent_info("scripted/fake", SETTINGS, await all_contexts(env, cs))
    p = Point(name="base", created="2026-11-30", plan=plan(cs), agent=agent)
    await store.save_point(p)
    assert (await store.load_point("base")) == p
    assert [r.name for r in await store.list_points()] == ["base"]
    with pytest.raises(StoreError, match="exists already"):
        await store.save_point(p)
    with pytest.raises(StoreError, match="no comparison point 'nope'; points: base"):
        await store.load_point("nope")
    with pytest.raises(StoreError, match="no stored run 'zzz'"):
        await store.load_run("zzz")
    assert await store.find_point("scripted/fake", p.plan.fingerprint) == p


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
    import gzip
    from pathlib import Path

    from psycopg.types.json import Jsonb

    data = json.loads(gzip.decompress((Path(__file__).parent / "data" / "v2-run.json.gz")
                                      .read_bytes()))
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


def _result(case_id):
    from evals.record.results import CaseResult

    return CaseResult(id=case_id, file="f.yaml", prompt="p", status="PASS")


def _header(run_id):
    return RunRecord(run_id=run_id, status="running", started="2026-12-01T00:00:00+00:00",
                     plan=plan(cases()),
                     agent=agent_info("scripted/fake", SETTINGS, {}))


async def _count(info, run_id):
    import psycopg

    async with await psycopg.AsyncConnection.connect(info) as conn:
        cur = await conn.execute("SELECT count(*) FROM eval_cases WHERE run_id = %s", (run_id,))
        return (await cur.fetchone())[0]


async def test_a_store_that_fails_mid_run_says_so_once_and_catches_up_when_it_returns(
        server_conninfo, capsys, monkeypatch):
    import asyncio

    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    from app.db import scratch_database
    from evals.record import store as store_module
    from evals.record.store import RunStore

    monkeypatch.setattr(store_module, "RETRY_FIRST_S", 0.05)
    async with scratch_database(server_conninfo, prefix="test_down") as info:
        name = conninfo_to_dict(info)["dbname"]

        async def allow(on):
            async with await psycopg.AsyncConnection.connect(server_conninfo,
                                                             autocommit=True) as admin:
                await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {on}')
                if not on:
                    await admin.execute("SELECT pg_terminate_backend(pid) FROM"
                                        " pg_stat_activity WHERE datname = %s", (name,))

        async with RunStore.open(info) as store:
            await store.start_run(_header("down1"))
            await store.save_case("down1", _result("a"))
            assert await store.flush()
            await allow(False)
            for case_id in ("b", "c", "d"):
                await store.save_case("down1", _result(case_id))
            for _ in range(100):
                if store.down:
                    break
                await asyncio.sleep(0.05)
            err = capsys.readouterr().err
            assert err.count("failed") == 1 and f"database {name}" in err
            assert "retrying" in err and "Traceback" not in err
            assert not await store.flush(0.3)  # still down: not written, not lost
            await allow(True)
            await store.finish_run(_header("down1").model_copy(update={"status": "complete"}))
        assert await _count(info, "down1") == 4
        assert "answers again" in capsys.readouterr().err


async def test_a_frozen_store_gives_up_in_bounded_time_naming_itself(server_conninfo,
                                                                     monkeypatch):
    import asyncio
    import time

    from app.db import scratch_database
    from evals.record import store as store_module
    from evals.record.store import RunStore, StoreUnavailable
    from tests.pg_proxy import pg_proxy

    monkeypatch.setattr(store_module, "STORE_TIMEOUT_S", 1.0)
    monkeypatch.setattr(store_module, "FLUSH_TIMEOUT_S", 2.0)
    monkeypatch.setattr(store_module, "RETRY_FIRST_S", 0.1)
    async with scratch_database(server_conninfo, prefix="test_frozen") as info, \
            pg_proxy(info) as proxy:
        started = 0.0

        async def body():
            nonlocal started
            async with RunStore.open(proxy.conninfo) as store:
                await store.start_run(_header("frozen1"))
                proxy.freeze()  # as SIGSTOP on the server's processes
                started = time.monotonic()
                await store.save_case("frozen1", _result("a"))
                await store.finish_run(_header("frozen1"))

        with pytest.raises(StoreUnavailable, match=r"run store \(database .* is down .*"
                                                   r"1 finished case\(s\) are not in it"):
            await asyncio.wait_for(body(), 60)
        assert time.monotonic() - started < 20
        proxy.freeze()
        with pytest.raises(StoreUnavailable, match="cannot be reached: no answer"):
            await asyncio.wait_for(RunStore.open(proxy.conninfo).__aenter__(), 60)


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


async def test_cases_that_finish_together_are_written_in_one_batch(store, monkeypatch):
    from evals.record.store import RunStore

    batches: list[list[str]] = []
    write = RunStore._write

    async def counting(self, batch):
        batches.append([r.id for _, r in batch])
        return await write(self, batch)

    monkeypatch.setattr(RunStore, "_write", counting)
    await store.start_run(_header("burst1"))
    for case_id in ("a", "b", "c"):
        await store.save_case("burst1", _result(case_id))
    assert await store.flush()
    assert batches == [["a", "b", "c"]]
    stored = await store.load_run("burst1")
    assert [r.id for r in stored.cases] == ["a", "b", "c"]


async def test_a_flush_writes_at_once_without_waiting_for_more_cases(store, monkeypatch):
    import time

    from evals.record import store as store_module

    monkeypatch.setattr(store_module, "WRITE_GATHER_S", 30.0)
    await store.start_run(_header("flush1"))
    await store.save_case("flush1", _result("a"))
    started = time.perf_counter()
    assert await store.flush(5)
    assert time.perf_counter() - started < 5
    assert [r.id for r in (await store.load_run("flush1")).cases] == ["a"]


async def test_an_id_with_a_nul_is_not_found_rather_than_sent_to_postgres(store):
    # PostgreSQL takes no NUL in a query's text: the store answers as for any unknown id
    with pytest.raises(StoreError, match="no stored run 'ab\\\\x00'"):
        await store.load_run("ab\x00")
    with pytest.raises(StoreError, match="no comparison 'c\\\\x00'"):
        await store.load_comparison("c\x00")
