"""An embedded PostgreSQL (with pgvector) in a git-ignored folder of the checkout."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict

log = logging.getLogger(__name__)

HANDLE_FILE = ".handle_pids.json"
# Held while a process starts, joins or lets go of the server. pgserver creates its system
# user (as root) and runs initdb without a lock of its own: two processes starting at once on
# a new machine each ran useradd, and one ran initdb as a user the other's useradd had
# overwritten.
START_LOCK = ".start.lock"
# pg_ctl's own waiting (-w) looks every 100 ms: through it a start took 0.12 s and a stop
# 0.105 s, where PostgreSQL itself needs about 0.02 s and 0.007 s (2026-12-05). The server of a
# data folder made already is started here as pg_ctl starts it, and stopped with a signal,
# and both are watched every POLL_S at first; pgserver still makes a new folder (initdb) and
# starts it the first time, and starts it whenever a start here does not come up.
POLL_S = 0.002
POLL_MAX_S = 0.05  # polls back off to this
START_WAIT_S = 30.0
STOP_WAIT_S = 60.0  # as pgserver's stop waits: then the server is killed


_at_exit: set[Path] = set()


class _Server(subprocess.Popen[bytes]):
    """A server started here and left to run: it outlives this process while others use it,
    and is stopped with a signal (`_stop`), never waited for here. (Popen's own warns of a
    child it did not wait for when it is collected.)"""

    def __del__(self) -> None:
        pass


# Where the embedded servers this process started or joined listen (host, port): a connection
# there is local and trusted, and may log in as any role (app/db/roles.py).
_served: set[tuple[str, str]] = set()


def _where(conninfo: str) -> tuple[str, str]:
    params = conninfo_to_dict(conninfo)
    return str(params.get("host") or ""), str(params.get("port") or "")


def is_embedded(conninfo: str) -> bool:
    """True when `conninfo` reaches an embedded server this process started or joined."""
    try:
        return _where(conninfo) in _served
    except psycopg.ProgrammingError:
        return False


def _alive(pid: object) -> bool:
    """A process that still runs (a killed one its parent has not reaped yet does not)."""
    if not isinstance(pid, int):
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _clear_dead_handles(pgdata: Path) -> None:
    """Drop pids of processes that died without releasing their handle.

    pgserver stops the server when the last live handle goes; a pid left behind by a killed
    process would keep the server from ever being considered unused (or cleaned up).
    """
    handle = pgdata / HANDLE_FILE
    if not handle.exists():
        return
    try:
        pids = json.loads(handle.read_text() or "[]")
    except json.JSONDecodeError:
        pids = []
    alive = [pid for pid in pids if _alive(pid)]
    if alive != pids:
        handle.write_text(json.dumps(alive))


def _postmaster(pgdata: Path, *, ready: bool = False) -> psutil.Process | None:
    """The postmaster that runs `pgdata` (with `ready`, once it takes connections), read from
    its postmaster.pid, which PostgreSQL may be writing still."""
    pgdata = pgdata.resolve()  # as pgserver names it to pg_ctl
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        process = psutil.Process(int(lines[0]))
        if process.status() == psutil.STATUS_ZOMBIE or str(pgdata) not in process.cmdline():
            return None  # a dead server, or a stale file whose pid another program now has
    except (OSError, ValueError, IndexError, psutil.Error):
        return None
    if ready and (len(lines) < 8 or lines[7].strip() != "ready"):
        return None
    return process


def _polls(wait_s: float) -> Iterator[None]:
    """A poll at once, then after POLL_S, twice that, and so on up to POLL_MAX_S apart,
    until `wait_s` has passed."""
    deadline = time.monotonic() + wait_s
    wait = POLL_S
    while True:
        yield
        if time.monotonic() > deadline:
            return
        time.sleep(wait)
        wait = min(wait * 2, POLL_MAX_S)


def _start(pgdata: Path) -> psutil.Process | None:
    """Start the server of `pgdata`, a data folder made already, as pgserver's `pg_ctl start`
    would (the same options, as the same system user, in a session of its own, its output to
    the folder's log) and return its postmaster once it takes connections; None when it
    could not be started (it exited: a bad setting, a folder another server still holds), and
    pgserver's own start, tried next, then says why."""
    try:
        import pgserver.postgres_server as pgs
        from pgserver._commands import POSTGRES_BIN_PATH
        from pgserver.utils import ensure_prefix_permissions, find_suitable_socket_dir

        pgdata = pgdata.resolve()  # as pgserver names it to pg_ctl
        user = "pgserver" if os.geteuid() == 0 else None
        socket_dir = find_suitable_socket_dir(pgdata, pgs.PostgresServer.runtime_path)
        if user is not None and socket_dir != pgdata:
            ensure_prefix_permissions(socket_dir)
            socket_dir.chmod(0o777)
        with (pgdata / "log").open("a") as out:
            server = _Server(
                [str(POSTGRES_BIN_PATH / "postgres"), "-D", str(pgdata), "-h", "",
                 "-k", str(socket_dir)],
                user=user, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
    except Exception as exc:  # a missing system user, say: pgserver's own start makes it
        log.info("the embedded PostgreSQL in %s was not started directly: %s", pgdata, exc)
        return None
    for _ in _polls(START_WAIT_S):
        found = _postmaster(pgdata, ready=True)
        if found is not None and found.pid == server.pid:
            return found
        if server.poll() is not None:
            log.info("the embedded PostgreSQL in %s exited as it started (%s)", pgdata,
                     server.returncode)
            return None
    raise RuntimeError(f"not ready within {START_WAIT_S:g} s")


def _stop(postmaster: psutil.Process, wait_s: float) -> None:
    """PostgreSQL's fast shutdown (what `pg_ctl stop` asks), killed after `wait_s`. Done when
    the postmaster has exited: psutil's wait would also wait for it to be reaped, which its
    parent (init, or a container's first process) may take seconds to do."""
    try:
        postmaster.send_signal(signal.SIGINT)
    except psutil.NoSuchProcess:
        return
    for _ in _polls(wait_s):
        if not _alive(postmaster.pid):
            return
    with contextlib.suppress(psutil.NoSuchProcess):
        postmaster.kill()


def _let_go(pgdata: Path) -> None:
    """This process's handle on the server dropped; the server stopped when it was the last
    one (pgserver's own exit handler, which would stop it through pg_ctl's slower waiting,
    then finds the handle gone and does nothing)."""
    handle = pgdata / HANDLE_FILE
    try:
        pids = json.loads(handle.read_text() or "[]")
    except (OSError, json.JSONDecodeError):
        return
    if os.getpid() not in pids:
        return
    rest = [pid for pid in pids if pid != os.getpid()]
    handle.write_text(json.dumps(rest))
    if not rest and (postmaster := _postmaster(pgdata)) is not None:
        try:
            _stop(postmaster, STOP_WAIT_S)
        except psutil.Error as exc:  # not ours to signal: said, and the exit goes on
            log.warning("could not stop the embedded PostgreSQL in %s: %s", pgdata, exc)


def _release_at_exit(data_dir: Path, pgdata: Path) -> None:
    """At exit, before pgserver's own handler (exit handlers run last registered first),
    forget the processes that joined the server and were killed since (otherwise their pids
    keep the server from ever being stopped), then let go of this process's handle, which
    stops the server when no live process holds one. A joiner that still runs keeps it; the
    server stops when the last of them exits."""
    if pgdata in _at_exit:
        return
    _at_exit.add(pgdata)

    def release() -> None:
        import pgserver.postgres_server as pgs

        with (data_dir / START_LOCK).open("a") as lock:  # no process joins meanwhile
            fcntl.flock(lock, fcntl.LOCK_EX)
            _clear_dead_handles(pgdata)
            with pgs.PostgresServer._lock:  # the handle file is pgserver's too
                _let_go(pgdata)

    atexit.register(release)


def start_embedded(data_dir: Path) -> str:
    """Start (or join) the embedded server under `data_dir` and return its connection URI."""
    runtime = data_dir / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    # platformdirs (used by pgserver for its lock file) insists on a private runtime dir.
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    pgdata = data_dir / "pg"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    if pgdata.exists():
        _clear_dead_handles(pgdata)

    # Imported here, not at the top: pgserver reads XDG_RUNTIME_DIR when it is imported, and
    # the line above has only just set it.
    import pgserver

    started = None
    try:
        with (data_dir / START_LOCK).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (pgdata / "PG_VERSION").exists() and _postmaster(pgdata) is None:
                started = _start(pgdata)  # pgserver joins it, or (None) starts it itself
            server = pgserver.get_server(str(pgdata), cleanup_mode="stop")
            _release_at_exit(data_dir, pgdata)
    except Exception as exc:  # pgserver raises bare exceptions from initdb/pg_ctl
        if started is not None:  # started here, joined by no one: not left running
            with contextlib.suppress(psutil.Error):
                _stop(started, STOP_WAIT_S)
        log_file = pgdata / "log"
        raise RuntimeError(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc}. "
            f"See {log_file}; set DATABASE_URL to use a server instead."
        ) from exc
    uri = str(server.get_uri())
    _served.add(_where(uri))
    return uri


def stop_orphaned(data_dir: Path, wait_s: float = 15.0) -> bool:
    """Stop the embedded server under `data_dir` if it runs and no live process owns it
    (every process that started or joined it was killed hard, so none of them stopped it);
    True when it was stopped. A server a live process started or joined is never touched."""
    pgdata = data_dir / "pg"
    if not (pgdata / "postmaster.pid").exists():
        return False
    with (data_dir / START_LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # no process is starting or joining it meanwhile
        postmaster = _postmaster(pgdata)
        if postmaster is None:
            return False
        if not (pgdata / HANDLE_FILE).exists():
            return False  # not started through pgserver: not ours to stop
        _clear_dead_handles(pgdata)
        try:
            owners = json.loads((pgdata / HANDLE_FILE).read_text() or "[]")
        except (OSError, json.JSONDecodeError):
            return False
        if owners:
            return False
        log.info("stopping the embedded PostgreSQL in %s: every process that used it is gone",
                 pgdata)
        try:
            _stop(postmaster, wait_s)
        except psutil.Error as exc:  # not ours to signal (another user's server)
            log.warning("could not stop the embedded PostgreSQL in %s: %s", pgdata, exc)
            return False
        return True
