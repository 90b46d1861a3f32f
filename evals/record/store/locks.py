"""The run lock: at most one writer of a stored run at a time. A live holder is refused by pid
and host; a dead one on this host is taken over."""

from __future__ import annotations

import datetime as dt
import os
import socket

import psutil
from pydantic import BaseModel, ConfigDict

from evals.record.store.connection import StoreBase
from evals.record.store.errors import RunLocked


class RunLock(BaseModel):
    """The holder of a run's lock."""

    model_config = ConfigDict(extra="forbid")
    pid: int
    host: str
    started_at: dt.datetime


def holder_alive(lock: RunLock) -> bool:
    """Whether a lock's holder on this host still runs: its pid exists and that process
    started before the lock was taken (a later one merely reuses the number)."""
    try:
        created = float(psutil.Process(lock.pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return bool(psutil.pid_exists(lock.pid))
    return created <= lock.started_at.timestamp() + 1.0  # create_time is rounded


class Locks(StoreBase):
    """Taking, reading and releasing a run's lock."""

    async def lock_run(self, run_id: str, *, pid: int | None = None,
                       host: str | None = None) -> None:
        """Take the run's lock for this process (at most one writer of a stored run at a time).
        A lock whose holder on this host is dead is taken over; one held by a live process, or
        by any process on another host (which cannot be looked at from here), is refused with
        RunLocked naming it. The same process taking it again is a no-op."""
        pid, host = pid or os.getpid(), host or socket.gethostname()
        for _ in range(3):
            taken = await self.db.fetchone(
                "INSERT INTO eval_run_locks (run_id, pid, host) VALUES (%s, %s, %s)"
                " ON CONFLICT (run_id) DO NOTHING RETURNING run_id", (run_id, pid, host))
            if taken is not None:
                return
            holder = await self.run_lock(run_id)
            if holder is None:
                continue  # released in between: try again
            if holder.pid == pid and holder.host == host:
                return
            if holder.host == host and not holder_alive(holder):
                await self.db.execute(
                    "DELETE FROM eval_run_locks WHERE run_id = %s AND pid = %s AND host = %s"
                    " AND started_at = %s", (run_id, holder.pid, holder.host,
                                             holder.started_at))
                continue
            raise RunLocked(f"run {run_id} is being written by process {holder.pid} on"
                            f" {holder.host} (since {holder.started_at:%Y-%m-%d %H:%M:%S %Z});"
                            " wait for it to end, or stop it")
        raise RunLocked(f"run {run_id}: its lock changed hands three times while taking it")

    async def run_lock(self, run_id: str) -> RunLock | None:
        """Who holds the run's lock, if anyone."""
        row = await self.db.fetchone("SELECT pid, host, started_at FROM eval_run_locks"
                                     " WHERE run_id = %s", (run_id,))
        return RunLock.model_validate(row) if row else None

    async def unlock_run(self, run_id: str, *, pid: int | None = None,
                         host: str | None = None) -> None:
        """Release the run's lock if this process holds it (another holder's is left)."""
        await self.db.execute(
            "DELETE FROM eval_run_locks WHERE run_id = %s AND pid = %s AND host = %s",
            (run_id, pid or os.getpid(), host or socket.gethostname()))
