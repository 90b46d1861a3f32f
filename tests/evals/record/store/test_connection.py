"""The run store's database opened: its own migrations, safe when two processes open a blank
store at once, and a migration that fails said as the store's error."""

import psycopg
import pytest

from app.db import scratch_database
from evals.record.store import StoreError
from evals.record.store.connection import MIGRATIONS, open_database
from tests.migration_race import race


async def test_two_stores_opened_at_once_on_a_blank_database_both_migrate_it(server_conninfo):
    async with scratch_database(server_conninfo, prefix="test_store_race") as info:

        async def opening():
            db = await open_database(info, "the run store")
            await db.close()
            return True

        first, second = await race(info, opening)
        # The bookkeeping is the owner's (the store's pool works as the evals role).
        async with await psycopg.AsyncConnection.connect(info) as owner:
            cur = await owner.execute("SELECT version FROM eval_schema_migrations")
            applied = await cur.fetchall()
    assert first is True, first
    assert second is True, second
    assert len(applied) == len(list(MIGRATIONS.glob("*.sql"))) > 0


async def test_a_migration_that_fails_is_the_stores_error_naming_it(server_conninfo):
    async with scratch_database(server_conninfo, prefix="test_store_broken") as info:
        async with await psycopg.AsyncConnection.connect(info, autocommit=True) as owner:
            await owner.execute("CREATE TABLE eval_runs (x integer)")  # in 0001's way
        with pytest.raises(StoreError, match=r"the run store cannot be brought up to date:"
                                             r" 0001_runs.sql failed: .*already exists"):
            await open_database(info, "the run store")
