"""`python -m evals workspace`: its start removes what a killed eval run left."""

import subprocess
import sys
import uuid

import psycopg
import uvicorn

from evals.cli import main
from evals.execute.env import clean_stale


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_the_workspace_start_drops_a_killed_runs_scratch_database(server_conninfo,
                                                                        store_template,
                                                                        monkeypatch):
    import asyncio

    from app.db import scratch_database
    from tests.evals.helpers import cli_environment

    name = f"eval_p{_dead_pid()}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    from evals.cli import workspace

    served, cleaned = [], []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(kw["host"]))

    async def spy(server):
        cleaned.append(server)
        return await clean_stale(server)

    monkeypatch.setattr(workspace, "clean_stale", spy)
    try:
        async with scratch_database(server_conninfo, prefix="test_ws",
                                    template=store_template) as info:
            with cli_environment(monkeypatch, {"DATABASE_URL": info}):
                assert await asyncio.to_thread(main, ["workspace", "--port", "1"]) == 0
        with psycopg.connect(server_conninfo) as conn:
            left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (name,)).fetchall()
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    # Another test's run may drop it first (any start may): the workspace's start looked, and
    # it is gone.
    assert left == [] and served == ["127.0.0.1"] and len(cleaned) == 1
