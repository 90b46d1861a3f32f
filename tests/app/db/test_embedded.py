"""The embedded PostgreSQL: its handle file and its start."""

import json
import os

import pytest

from app.db.embedded import HANDLE_FILE, _clear_dead_handles


def test_dead_pids_are_cleared_from_the_handle_file(tmp_path):
    dead = 2**22 + 12345  # above the default pid_max: never a live process
    (tmp_path / HANDLE_FILE).write_text(json.dumps([os.getpid(), dead]))
    _clear_dead_handles(tmp_path)
    assert json.loads((tmp_path / HANDLE_FILE).read_text()) == [os.getpid()]


def test_the_server_is_started_under_a_lock_that_other_starters_wait_for(tmp_path, monkeypatch):
    import fcntl

    from app.db import embedded

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))  # start_embedded sets it; restored after
    import pgserver

    held = []

    class Server:
        def get_uri(self):
            return "postgresql://embedded"

    def get_server(pgdata, cleanup_mode):
        with (tmp_path / embedded.START_LOCK).open("a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(pgdata)
        return Server()

    monkeypatch.setattr(pgserver, "get_server", get_server)
    assert embedded.start_embedded(tmp_path) == "postgresql://embedded"
    assert held == [str(tmp_path / "pg")]


STARTS_EMBEDDED = """
import sys, time
from pathlib import Path
from app.db import resolve_conninfo
print(resolve_conninfo(None, Path(sys.argv[1])), flush=True)
time.sleep(600)
"""


def _postgres_of(pgdata):
    import psutil

    return [p for p in psutil.process_iter(["cmdline"])
            if str(pgdata) in " ".join(p.info["cmdline"] or [])]


@pytest.mark.slow
def test_a_postgres_no_live_process_owns_is_stopped_and_a_live_ones_is_not(tmp_path):
    import subprocess
    import sys
    import time

    from app.db import resolve_conninfo

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    owner = subprocess.Popen([sys.executable, "-c", STARTS_EMBEDDED, str(tmp_path)], env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        owner.stdout.readline()
        assert _postgres_of(tmp_path / "pg")
        # Another process, on another server (DATABASE_URL), while the owner lives: untouched.
        assert resolve_conninfo("postgresql://127.0.0.1:9/other", tmp_path).endswith("other")
        assert _postgres_of(tmp_path / "pg")
    finally:
        owner.kill()  # SIGKILL: its exit handlers, which would stop the server, never run
        owner.wait()
        owner.stdout.close()
    assert _postgres_of(tmp_path / "pg")  # left running, owned by no live process
    resolve_conninfo("postgresql://127.0.0.1:9/other", tmp_path)
    deadline = time.monotonic() + 10
    while _postgres_of(tmp_path / "pg") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _postgres_of(tmp_path / "pg") == []
