"""What a killed process left: scratch databases and folders that carry their owner's pid in
their name (the evals make them: a run's database and its blob folder), removed by the next
start of anything (a run, the app, the workspace) once their owner is gone, and never while it
lives: two processes on one data folder do not disturb each other."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import tempfile
from pathlib import Path

import psutil
import psycopg

from app.db import connect, failure

log = logging.getLogger(__name__)

# A scratch database is named SCRATCH_DB_PREFIX + pid + "_" + …; a scratch folder (under the
# system's temporary folder) SCRATCH_DIR_PREFIX + pid + "-" + ….
SCRATCH_DB_PREFIX = "eval_p"
SCRATCH_DIR_PREFIX = "eval-blobs-p"
_OWNER = re.compile(rf"^(?:{SCRATCH_DB_PREFIX}|{SCRATCH_DIR_PREFIX})(\d+)[_-]")
TIMEOUT_S = 10.0


def owner_gone(name: str) -> bool:
    """True for a scratch name whose owning process no longer runs."""
    m = _OWNER.match(name)
    return m is not None and not psutil.pid_exists(int(m.group(1)))


def remove_dead_folders(root: Path | None = None) -> list[str]:
    """Remove the scratch folders of processes that are gone; returns their paths."""
    removed = []
    for folder in Path(root or tempfile.gettempdir()).glob(f"{SCRATCH_DIR_PREFIX}*"):
        if folder.is_dir() and owner_gone(folder.name):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


async def remove_leftovers(server_conninfo: str) -> list[str]:
    """Drop the scratch databases and remove the scratch folders of processes that are gone
    (bounded in time: a server that does not answer is an error, not a hang)."""
    removed = []
    async with asyncio.timeout(TIMEOUT_S * 2):
        async with await connect(server_conninfo, TIMEOUT_S, autocommit=True) as admin:
            cur = await admin.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                      (SCRATCH_DB_PREFIX.replace("_", r"\_") + "%",))
            for (name,) in await cur.fetchall():
                if not owner_gone(name):
                    continue
                # A pid names a process on this machine only: a database some session still
                # uses belongs to a live run, perhaps on another machine sharing the server.
                busy = await admin.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = %s LIMIT 1", (name,))
                if await busy.fetchone() is not None:
                    continue
                try:  # never WITH (FORCE): a session that connected meanwhile keeps it
                    await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
                except psycopg.errors.ObjectInUse:
                    continue
                removed.append(name)
    return removed + await asyncio.to_thread(remove_dead_folders)


async def remove_leftovers_saying(server_conninfo: str) -> list[str]:
    """remove_leftovers, each removal logged; a server that refuses (no right to drop, or no
    answer) is one warning, never a failed start."""
    try:
        removed = await remove_leftovers(server_conninfo)
    except (psycopg.Error, TimeoutError, OSError) as exc:
        log.warning("what killed processes left was not removed: %s", failure(exc))
        return []
    for name in removed:
        log.info("removed %s, left by a process that is gone", name)
    return removed
