"""The run store's database opened: its own migrations, safe when two processes open a blank
store at once."""

import psycopg

from app.db import scratch_database
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
