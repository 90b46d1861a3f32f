"""The run store's database opened: its own migrations, safe when two processes open a blank
store at once."""

from app.db import scratch_database
from evals.record.store.connection import open_database
from tests.migration_race import race


async def test_two_stores_opened_at_once_on_a_blank_database_both_migrate_it(server_conninfo):
    async with scratch_database(server_conninfo, prefix="test_store_race") as info:

        async def opening():
            db = await open_database(info, "the run store")
            try:
                return await db.fetch("SELECT version FROM eval_schema_migrations")
            finally:
                await db.close()

        first, second = await race(info, opening)
    assert not isinstance(first, BaseException), first
    assert not isinstance(second, BaseException), second
    assert len(first) == len(second) > 0
