"""An embedded PostgreSQL (with pgvector) in a git-ignored folder of the checkout."""

from __future__ import annotations

import atexit
import fcntl
import json
import logging
import os
import signal
from pathlib import Path

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict

log = logging.getLogger(__name__)

HANDLE_FILE = ".handle_pids.json"
# Held while a process starts or joins the server. pgserver creates its system user (as root)
# and runs initdb without a lock of its own: two processes starting at once on a new machine
# each ran useradd, and one ran initdb as a user the other's useradd had overwritten.
START_LOCK = ".start.lock"


_at_exit: set[Path] = set()
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


def _release_at_exit(data_dir: Path, pgdata: Path) -> None:
    """At exit, before pgserver lets go of its handle (exit handlers run last registered
    first), forget the processes that joined the server and were killed since: otherwise
    their pids keep pgserver from stopping a server no live process uses any more. A
    joiner that still runs keeps it; the server stops when the last of them exits."""
    if pgdata in _at_exit:
        return
    _at_exit.add(pgdata)

    def release() -> None:
        with (data_dir / START_LOCK).open("a") as lock:  # no process joins meanwhile
            fcntl.flock(lock, fcntl.LOCK_EX)
            _clear_dead_handles(pgdata)

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

    try:
        with (data_dir / START_LOCK).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            server = pgserver.get_server(str(pgdata), cleanup_mode="stop")
            _release_at_exit(data_dir, pgdata)
    except Exception as exc:  # pgserver raises bare exceptions from initdb/pg_ctl
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
    pidfile = pgdata / "postmaster.pid"
    if not pidfile.exists():
        return False
    with (data_dir / START_LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # no process is starting or joining it meanwhile
        try:
            pid = int(pidfile.read_text().split()[0])
            postmaster = psutil.Process(pid)
            if "postgres" not in postmaster.name():
                return False  # a stale file whose pid another program now has
        except (OSError, ValueError, IndexError, psutil.Error):
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
            postmaster.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
            postmaster.wait(wait_s)
        except psutil.TimeoutExpired:
            postmaster.kill()
        except psutil.NoSuchProcess:
            pass
        except psutil.Error as exc:  # not ours to signal (another user's server)
            log.warning("could not stop the embedded PostgreSQL in %s: %s", pgdata, exc)
            return False
        return True
