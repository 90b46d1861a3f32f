"""The store's write-behind queue (evals/record/store/writer.py): a case stored the moment it
finishes, finished cases written in batches, at once on a flush; a store that fails or freezes
mid-run said once, in bounded time, and caught up with when it answers again."""

import pytest

from evals.execute.agent import agent_info
from evals.execute.session import Prepared, Version
from evals.record.run import RunRecord
from tests.evals.execute.helpers import SETTINGS, cases, plan, run
from tests.fakes import ScriptedModel, say


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


async def test_a_store_that_fails_mid_run_says_so_once_and_catches_up_when_it_returns(
        server_conninfo, store_template, capsys, monkeypatch):
    import asyncio

    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    from app.db import scratch_database
    from evals.record.store import RunStore, writer

    monkeypatch.setattr(writer, "RETRY_FIRST_S", 0.05)
    async with scratch_database(server_conninfo, prefix="test_down",
                                template=store_template) as info:
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
                                                                     store_template,
                                                                     monkeypatch):
    import asyncio
    import time

    from app.db import scratch_database
    from evals.record.store import RunStore, StoreUnavailable, connection, writer
    from tests.pg_proxy import pg_proxy

    monkeypatch.setattr(connection, "STORE_TIMEOUT_S", 1.0)
    monkeypatch.setattr(writer, "FLUSH_TIMEOUT_S", 2.0)
    monkeypatch.setattr(writer, "RETRY_FIRST_S", 0.1)
    async with scratch_database(server_conninfo, prefix="test_frozen",
                                template=store_template) as info, \
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

    from evals.record.store import writer

    monkeypatch.setattr(writer, "WRITE_GATHER_S", 30.0)
    await store.start_run(_header("flush1"))
    await store.save_case("flush1", _result("a"))
    started = time.perf_counter()
    assert await store.flush(5)
    assert time.perf_counter() - started < 5
    assert [r.id for r in (await store.load_run("flush1")).cases] == ["a"]


async def test_the_hook_before_a_batch_is_called_first_and_its_failure_is_said(store, capsys):
    calls: list[int] = []

    def before_write():
        calls.append(store.unstored)
        if len(calls) == 1:
            raise ValueError("the artifact's folder is gone")

    store.before_write = before_write
    await store.start_run(_header("hook1"))
    await store.save_case("hook1", _result("a"))
    assert await store.flush()
    await store.save_case("hook1", _result("b"))
    assert await store.flush()
    assert calls == [1, 1]  # before each batch, while its case was still unwritten
    assert [r.id for r in (await store.load_run("hook1")).cases] == ["a", "b"]
    err = capsys.readouterr().err
    assert f"warning: before writing to {store.name}: ValueError: the artifact's folder is" \
        " gone" in err
