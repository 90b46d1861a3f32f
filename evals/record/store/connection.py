"""The run store's database: where it is (named without a password), its own forward
migrations (evals/record/store_migrations/, recorded in eval_schema_migrations), and the pool
every store call goes through, each call bounded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from app.db import Database, failure
from app.db.migrate import MigrationError
from app.db.roles import EVALS_ROLE
from evals.record.store.errors import StoreError, StoreUnavailable

MIGRATIONS = Path(__file__).parents[1] / "store_migrations"
MIGRATIONS_TABLE = "eval_schema_migrations"

# Every call to the store's server is bounded: connecting, and each statement (on the server
# and here, since a frozen server enforces nothing). Opening (migrations and the pool) gets
# twice that.
STORE_TIMEOUT_S = 10.0


def store_name(conninfo: str) -> str:
    """The store as a person finds it: its database and server, never a password."""
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "the run store"
    where = str(params.get("host") or "localhost")
    if params.get("port"):
        where += f":{params['port']}"
    return f"the run store (database {params.get('dbname', '?')} on {where})"


async def open_database(conninfo: str, name: str) -> Database:
    """The store's database migrated (a database migrated already is only looked at) and its
    pool open, working as the eval processes' role (app/db/roles.py: it adds evidence and
    never changes it); StoreUnavailable, naming it, when the server does not answer in time,
    and StoreError when a migration fails."""
    db = Database(conninfo, max_size=4, app_schema=False,
                  migrations=(MIGRATIONS, MIGRATIONS_TABLE), timeout_s=STORE_TIMEOUT_S,
                  role=EVALS_ROLE)
    try:
        async with asyncio.timeout(STORE_TIMEOUT_S * 2):
            await db.open()
    except (psycopg.OperationalError, TimeoutError) as exc:
        await db.close()
        raise StoreUnavailable(
            f"{name} cannot be reached: {failure(exc, STORE_TIMEOUT_S)}") from None
    except MigrationError as exc:  # said as the store's, once, never as a traceback
        await db.close()
        raise StoreError(f"{name} cannot be brought up to date: {exc}") from None
    return db


class StoreBase:
    """What every part of the store stands on: its open database and its name."""

    def __init__(self, db: Database, name: str = "the run store") -> None:
        self.db = db
        self.name = name

    def failure_of(self, exc: BaseException) -> str:
        """A call's failure in one line, its timeout named."""
        return failure(exc, self.db.timeout_s)
