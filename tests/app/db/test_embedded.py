"""The embedded PostgreSQL: its handle file and its start."""

import json
import os

import pytest

from app.db.embedded import HANDLE_FILE, _clear_dead_handles


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch):
    """XDG_RUNTIME_DIR for this test alone (start_embedded sets it, and pgserver, imported
    where a server is started or let go of, keeps its lock there); restored after."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return runtime


def test_dead_pids_are_cleared_from_the_handle_file(tmp_path):
    dead = 2**22 + 12345  # above the default pid_max: never a live process
    (tmp_path / HANDLE_FILE).write_text(json.dumps([os.getpid(), dead]))
    _clear_dead_handles(tmp_path)
    assert json.loads((tmp_path / HANDLE_FILE).read_text()) == [os.getpid()]


@pytest.mark.usefixtures("runtime_dir")
def test_the_server_is_started_under_a_lock_that_other_starters_wait_for(tmp_path, monkeypatch):
    import fcntl

    import pgserver

    from app.db import embedded

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


def _postmaster_pid_file(pgdata, pid, lines):
    pgdata.mkdir(exist_ok=True)
    fields = [str(pid), str(pgdata), "1796490759", "5432", str(pgdata), "", "  1 2", "ready"]
    (pgdata / "postmaster.pid").write_text("\n".join(fields[:lines]) + "\n")


def test_the_postmaster_is_the_live_process_of_that_folder_and_ready_once_it_says_so(tmp_path):
    import subprocess

    from app.db.embedded import _postmaster

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    assert _postmaster(pgdata) is None  # no postmaster.pid
    server = _stand_in(pgdata)
    other = subprocess.Popen(["sleep", "60"])
    try:
        _postmaster_pid_file(pgdata, server.pid, 7)  # being written: no status yet
        assert _postmaster(pgdata).pid == server.pid
        assert _postmaster(pgdata, ready=True) is None
        _postmaster_pid_file(pgdata, server.pid, 8)
        assert _postmaster(pgdata, ready=True).pid == server.pid
        _postmaster_pid_file(pgdata, other.pid, 8)  # a stale file: its pid is another program's
        assert _postmaster(pgdata) is None
        (pgdata / "postmaster.pid").write_text("not a pid\n")
        assert _postmaster(pgdata) is None
        server.kill()
        server.wait()
        _postmaster_pid_file(pgdata, server.pid, 8)  # a server that is gone
        assert _postmaster(pgdata) is None
    finally:
        for proc in (server, other):
            proc.kill()
            proc.wait()


def _sleeper(on_sigint: str, *args: str):
    """A process that sleeps a minute with SIGINT set to `on_sigint` ("SIG_DFL": it ends;
    "SIG_IGN": it goes on), whatever it came in with (a shell's background job starts its
    commands ignoring it); returned once that is set. `args` end up on its command line."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-c", f"import signal, time; signal.signal(signal.SIGINT, signal."
         f"{on_sigint}); print('up', flush=True); time.sleep(60)", *args],
        stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "up\n"
    proc.stdout.close()
    return proc


def test_a_stop_ends_once_the_server_has_exited_and_kills_one_that_does_not_stop(tmp_path):
    import signal

    import psutil

    from app.db.embedded import _stop

    stops, ignores = _sleeper("SIG_DFL"), _sleeper("SIG_IGN")
    try:
        _stop(psutil.Process(stops.pid), wait_s=30)
        # Exited, and not reaped yet: the stop did not wait for its parent to reap it.
        assert psutil.Process(stops.pid).status() == psutil.STATUS_ZOMBIE
        assert stops.wait(timeout=1) == -signal.SIGINT
        _stop(psutil.Process(ignores.pid), wait_s=0.3)
        assert ignores.wait(timeout=5) == -signal.SIGKILL
    finally:
        for proc in (stops, ignores):
            proc.kill()
            proc.wait()


STARTS_AND_ENDS = """
import sys
from pathlib import Path
import psycopg
from app.db.embedded import start_embedded
with psycopg.connect(start_embedded(Path(sys.argv[1]))) as conn:
    print(conn.execute("SELECT 1").fetchone()[0], flush=True)
"""


@pytest.mark.slow
def test_a_process_that_ends_stops_the_server_it_made_or_started_again(tmp_path):
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    # The first makes the data folder (pgserver's initdb and start); the second starts the
    # server of a folder made already (without pg_ctl's waiting).
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", STARTS_AND_ENDS, str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout == "1\n", done.stderr
        assert _postgres_of(tmp_path / "pg") == []
        assert not (tmp_path / "pg" / "postmaster.pid").exists()
        assert json.loads((tmp_path / "pg" / HANDLE_FILE).read_text()) == []
    # A setting PostgreSQL refuses: the start here sees the server exit (it does not wait for
    # it to be ready), and pgserver's own start, tried next, fails saying so.
    from app.db.embedded import _start

    with (tmp_path / "pg" / "postgresql.conf").open("a") as conf:
        conf.write("\nno_such_setting = 1\n")
    assert _start(tmp_path / "pg") is None
    done = subprocess.run([sys.executable, "-c", STARTS_AND_ENDS, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "could not start the embedded PostgreSQL" in done.stderr, done.stderr
    assert _postgres_of(tmp_path / "pg") == []


def _stand_in(pgdata):
    """A process whose command line names `pgdata`, as a postmaster's does, and the
    postmaster.pid that names it, ready."""
    proc = _sleeper("SIG_DFL", str(pgdata))  # SIGINT ends it, as it ends a postmaster
    _postmaster_pid_file(pgdata, proc.pid, 8)
    return proc


def test_letting_go_drops_this_process_s_handle_and_the_last_one_stops_the_server(tmp_path):
    import signal

    from app.db.embedded import _let_go

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    server = _stand_in(pgdata)
    handle = pgdata / HANDLE_FILE
    try:
        handle.write_text(json.dumps([os.getpid(), server.pid]))  # another live holder
        _let_go(pgdata)
        assert json.loads(handle.read_text()) == [server.pid] and server.poll() is None
        _let_go(pgdata)  # this process holds none now: nothing changes
        assert json.loads(handle.read_text()) == [server.pid] and server.poll() is None
        handle.write_text("not json")
        _let_go(pgdata)
        assert server.poll() is None
        handle.write_text(json.dumps([os.getpid()]))  # the last holder
        _let_go(pgdata)
        assert json.loads(handle.read_text()) == []
        assert server.wait(timeout=10) == -signal.SIGINT  # PostgreSQL's fast shutdown
    finally:
        server.kill()
        server.wait()


def test_a_server_that_cannot_be_signalled_at_exit_is_said_and_the_exit_goes_on(
        tmp_path, monkeypatch, caplog):
    import psutil

    from app.db import embedded

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    server = _stand_in(pgdata)

    def refused(postmaster, wait_s):
        raise psutil.AccessDenied(postmaster.pid)

    monkeypatch.setattr(embedded, "_stop", refused)
    try:
        (pgdata / HANDLE_FILE).write_text(json.dumps([os.getpid()]))
        embedded._let_go(pgdata)
        assert "could not stop the embedded PostgreSQL" in caplog.text
        assert json.loads((pgdata / HANDLE_FILE).read_text()) == []
    finally:
        server.kill()
        server.wait()


@pytest.mark.usefixtures("runtime_dir")
def test_a_direct_start_that_cannot_spawn_leaves_the_start_to_pgserver(tmp_path, monkeypatch,
                                                                       caplog):
    import logging

    from app.db import embedded


    def no_user(*args, **kwargs):
        raise KeyError("getpwnam(): name not found: 'pgserver'")

    monkeypatch.setattr(embedded, "_Server", no_user)
    (tmp_path / "pg").mkdir()
    with caplog.at_level(logging.INFO, logger="app.db.embedded"):
        assert embedded._start(tmp_path / "pg") is None
    assert "was not started directly" in caplog.text and "getpwnam" in caplog.text


@pytest.mark.usefixtures("runtime_dir")
def test_a_server_started_here_that_pgserver_cannot_join_is_stopped(tmp_path, monkeypatch):
    import signal

    import pgserver
    import psutil

    from app.db import embedded

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("16\n")
    server = None

    def start(folder):
        nonlocal server
        server = _stand_in(folder)
        return psutil.Process(server.pid)

    def get_server(folder, cleanup_mode):
        raise RuntimeError("initdb: the folder is not empty")

    monkeypatch.setattr(embedded, "_start", start)
    monkeypatch.setattr(pgserver, "get_server", get_server)
    try:
        with pytest.raises(RuntimeError, match="could not start the embedded PostgreSQL"):
            embedded.start_embedded(tmp_path)
        assert server is not None and server.wait(timeout=10) == -signal.SIGINT
    finally:
        if server is not None:
            server.kill()
            server.wait()


@pytest.mark.usefixtures("runtime_dir")
def test_the_exit_handler_is_registered_once_and_lets_go_under_the_start_lock(tmp_path,
                                                                              monkeypatch):
    import signal

    from app.db import embedded

    registered = []
    monkeypatch.setattr(embedded.atexit, "register", registered.append)
    monkeypatch.setattr(embedded, "_at_exit", set())
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    embedded._release_at_exit(tmp_path, pgdata)
    embedded._release_at_exit(tmp_path, pgdata)  # joined twice: released once
    assert len(registered) == 1
    server = _stand_in(pgdata)
    try:
        dead = 2**22 + 12345  # a holder killed since: forgotten, so it keeps nothing running
        (pgdata / HANDLE_FILE).write_text(json.dumps([os.getpid(), dead]))
        registered[0]()
        assert json.loads((pgdata / HANDLE_FILE).read_text()) == []
        assert server.wait(timeout=10) == -signal.SIGINT
    finally:
        server.kill()
        server.wait()


def test_an_orphaned_server_is_stopped_only_when_it_is_pgserver_s_and_no_one_holds_it(
        tmp_path, monkeypatch, caplog):
    import signal

    import psutil

    from app.db import embedded

    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    assert embedded.stop_orphaned(tmp_path) is False  # no server
    _postmaster_pid_file(pgdata, 2**22 + 12345, 8)
    assert embedded.stop_orphaned(tmp_path) is False  # a stale file: its server is gone
    server = _stand_in(pgdata)
    try:
        assert embedded.stop_orphaned(tmp_path) is False  # no handle file: not pgserver's
        (pgdata / HANDLE_FILE).write_text("not json")
        assert embedded.stop_orphaned(tmp_path) is False
        (pgdata / HANDLE_FILE).write_text(json.dumps([os.getpid()]))
        assert embedded.stop_orphaned(tmp_path) is False  # a live process holds it
        (pgdata / HANDLE_FILE).write_text("[]")

        def refused(postmaster, wait_s):
            raise psutil.AccessDenied(postmaster.pid)

        with monkeypatch.context() as m:
            m.setattr(embedded, "_stop", refused)
            assert embedded.stop_orphaned(tmp_path) is False
        assert "could not stop the embedded PostgreSQL" in caplog.text
        assert server.poll() is None
        assert embedded.stop_orphaned(tmp_path) is True
        assert server.wait(timeout=10) == -signal.SIGINT
    finally:
        server.kill()
        server.wait()
