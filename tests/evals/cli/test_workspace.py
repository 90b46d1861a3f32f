"""`python -m evals workspace`: its start removes what a killed eval run left."""

import subprocess
import sys
import uuid

import psycopg
import uvicorn

from evals.cli import main


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_the_workspace_start_drops_a_killed_runs_scratch_database(server_conninfo,
                                                                        monkeypatch, capsys):
    import asyncio

    from app.db import scratch_database
    from tests.evals.helpers import cli_environment

    name = f"eval_p{_dead_pid()}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.append(kw["host"]))
    try:
        async with scratch_database(server_conninfo, prefix="test_ws") as info:
            with cli_environment(monkeypatch, {"DATABASE_URL": info}):
                assert await asyncio.to_thread(main, ["workspace", "--port", "1"]) == 0
        with psycopg.connect(server_conninfo) as conn:
            left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (name,)).fetchall()
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert left == [] and served == ["127.0.0.1"]
    assert f"removed {name}, left by an eval run whose process is gone" in capsys.readouterr().out
