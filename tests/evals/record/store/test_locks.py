"""The run lock (evals/record/store/locks.py: lock_run, unlock_run): one writer of a stored run
at a time; a live holder is refused by pid and host, a dead one on this host taken over."""

import os
import socket
import subprocess
import sys

import pytest
from psycopg.types.json import Jsonb

from evals.record.store import RunLocked

HOST = socket.gethostname()


async def a_run(store, run_id="lockrun00001"):
    await store.db.execute(
        "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint,"
        " header) VALUES (%s, 'interrupted', 'openai/fake', 'p', 'a', %s)",
        (run_id, Jsonb({})))
    return run_id


@pytest.fixture
def live_pid():
    """Another process of this host, alive for the test."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child.pid
    child.kill()
    child.wait()


async def test_a_second_writer_is_refused_naming_the_holders_pid_and_host(store, live_pid):
    run_id = await a_run(store)
    await store.lock_run(run_id, pid=live_pid)
    with pytest.raises(RunLocked, match=f"run {run_id} is being written by process {live_pid}"
                                        f" on {HOST}"):
        await store.lock_run(run_id)
    await store.unlock_run(run_id)  # not ours: left alone
    assert (await store.run_lock(run_id)).pid == live_pid
    await store.unlock_run(run_id, pid=live_pid)
    await store.lock_run(run_id)
    await store.lock_run(run_id)  # the holder taking it again
    assert (await store.run_lock(run_id)).pid == os.getpid()
    await store.unlock_run(run_id)
    assert await store.run_lock(run_id) is None


async def test_a_dead_holder_on_this_host_is_taken_over(store):
    run_id = await a_run(store)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],  # noqa: ASYNC221
                          capture_output=True, text=True, check=True)
    await store.lock_run(run_id, pid=int(dead.stdout))  # its holder died without releasing it
    await store.lock_run(run_id)
    assert (await store.run_lock(run_id)).pid == os.getpid()


async def test_a_reused_pid_is_not_the_holder(store, live_pid):
    run_id = await a_run(store)
    # the lock is older than the process that now has its pid
    await store.db.execute("INSERT INTO eval_run_locks (run_id, pid, host, started_at) VALUES"
                           " (%s, %s, %s, now() - interval '1 hour')", (run_id, live_pid, HOST))
    await store.lock_run(run_id)
    assert (await store.run_lock(run_id)).pid == os.getpid()


async def test_a_holder_on_another_host_is_refused(store):
    run_id = await a_run(store)
    await store.lock_run(run_id, pid=1234, host="build-7")
    with pytest.raises(RunLocked, match="process 1234 on build-7"):
        await store.lock_run(run_id)


async def test_a_lock_that_keeps_changing_hands_is_refused(store, live_pid, monkeypatch):
    run_id = await a_run(store)
    await store.lock_run(run_id, pid=live_pid)

    async def released(run_id):  # seen gone each time, yet taken again before the insert
        return None

    monkeypatch.setattr(store, "run_lock", released)
    with pytest.raises(RunLocked, match=f"run {run_id}: its lock changed hands three times"):
        await store.lock_run(run_id)
