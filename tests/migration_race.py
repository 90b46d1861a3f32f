"""Two migrators made to race deterministically on a blank database (tests only): an event
trigger holds the first one's first CREATE, uncommitted, until the second has reached the point
where it waits too, then lets both go. Before the lock came first, the second's `CREATE TABLE IF
NOT EXISTS` of the bookkeeping table waited on the first's uncommitted row and then failed with
UniqueViolation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

_GATE = 727_999  # held by the test while the first migrator's CREATE must wait


async def _waiting(gate: psycopg.AsyncConnection[Any], dbname: str, n: int) -> None:
    """Until `n` sessions on the database wait on a lock (10 s at most)."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        cur = await gate.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <>"
            " pg_backend_pid() AND wait_event_type = 'Lock'", (dbname,))
        row = await cur.fetchone()
        if row and row[0] >= n:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{n} migrator(s) never waited on a lock")


async def race(conninfo: str, migrator: Callable[[], Awaitable[Any]]) -> list[Any]:
    """Run `migrator` twice on the blank database at `conninfo`, the second started while the
    first's first CREATE is held uncommitted; both their outcomes (a result or the exception
    raised), in the order started."""
    dbname = str(conninfo_to_dict(conninfo)["dbname"])
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as gate:
        await gate.execute(
            "CREATE FUNCTION hold_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" PERFORM pg_advisory_lock_shared({_GATE});"
            f" PERFORM pg_advisory_unlock_shared({_GATE}); END $$")
        await gate.execute("CREATE EVENT TRIGGER hold_ddl ON ddl_command_end"
                           " EXECUTE FUNCTION hold_ddl()")
        await gate.execute("SELECT pg_advisory_lock(%s)", (_GATE,))
        first = asyncio.create_task(migrator())
        await _waiting(gate, dbname, 1)  # inside its first CREATE, uncommitted
        second = asyncio.create_task(migrator())
        await _waiting(gate, dbname, 2)  # waiting for the first, one way or another
        await gate.execute("SELECT pg_advisory_unlock(%s)", (_GATE,))
        outcomes = await asyncio.gather(first, second, return_exceptions=True)
        await gate.execute("DROP EVENT TRIGGER hold_ddl")
    return list(outcomes)
