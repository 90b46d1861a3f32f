"""What a killed process left is removed by the next start, and what a live one owns is not."""

import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg

from app.db.leftovers import remove_leftovers


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_a_dead_processs_scratch_databases_and_folders_go_and_a_live_ones_stay(
        server_conninfo):
    dead, live = _dead_pid(), os.getpid()
    tag = uuid.uuid4().hex[:8]
    names = {who: f"eval_p{pid}_{tag}" for who, pid in (("dead", dead), ("live", live))}
    folders = {who: Path(tempfile.mkdtemp(prefix=f"eval-blobs-p{pid}-"))
               for who, pid in (("dead", dead), ("live", live))}
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        for name in names.values():
            admin.execute(f'CREATE DATABASE "{name}"')
    try:
        removed = await remove_leftovers(server_conninfo)
        with psycopg.connect(server_conninfo) as conn:
            left = {r[0] for r in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"%{tag}",))}
        # Another test's run may remove the dead ones first (any start may): what is left
        # is what counts, and what this call removed never includes a live process's.
        assert names["live"] not in removed and str(folders["live"]) not in removed
        assert left == {names["live"]}
        assert not folders["dead"].exists() and folders["live"].exists()
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            for name in names.values():
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        folders["live"].rmdir()


async def test_a_dead_pid_s_database_that_a_session_still_uses_is_kept(server_conninfo):
    # The same pid on another machine sharing the server is another process: a database some
    # session uses belongs to a live run there.
    name = f"eval_p{_dead_pid()}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    user = psycopg.conninfo.make_conninfo(server_conninfo, dbname=name)
    try:
        with psycopg.connect(user):
            assert name not in await remove_leftovers(server_conninfo)
        with psycopg.connect(server_conninfo) as conn:
            assert conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                (name,)).fetchone() is not None
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
