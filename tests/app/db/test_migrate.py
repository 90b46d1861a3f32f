"""Forward migrations: recorded, applied once, named when they fail, and a version applied
under another file's name refused."""

import pytest

from app.db import Database
from app.db.migrate import MigrationError, discover, migrate


async def test_migrations_are_recorded_and_not_reapplied(db: Database):
    rows = await db.fetch("SELECT version FROM schema_migrations ORDER BY version")
    assert [r["version"] for r in rows] == [m.version for m in discover()]
    async with db.connection() as conn:
        assert await migrate(conn) == []


def test_misnamed_migration_is_an_error(tmp_path):
    (tmp_path / "1_init.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="1_init.sql: migration files are named"):
        discover(tmp_path)


def test_duplicate_migration_version_is_an_error(tmp_path):
    (tmp_path / "0001_a.sql").write_text("SELECT 1;")
    (tmp_path / "0001_b.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="version 1 already used by 0001_a.sql"):
        discover(tmp_path)


async def test_failing_migration_names_the_file_and_leaves_nothing(db: Database, tmp_path):
    (tmp_path / "0001_ok.sql").write_text("CREATE TABLE mig_ok (id int);")
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE mig_half (id int); SELECT nonsense();")
    async with db.connection() as conn:
        await conn.execute("DELETE FROM schema_migrations")
        with pytest.raises(MigrationError, match="0002_bad.sql failed"):
            await migrate(conn, tmp_path)
    tables = {r["tablename"] for r in await db.fetch("SELECT tablename FROM pg_tables")}
    assert "mig_ok" in tables and "mig_half" not in tables


async def test_a_version_applied_under_another_name_is_refused_not_skipped(db: Database,
                                                                           tmp_path):
    """Two files met on one number, and one was renumbered: the database that applied the
    other under that number must not take the renumbered one as done."""
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE mig_first (id int);")
    async with db.connection() as conn:
        await conn.execute("DELETE FROM schema_migrations")
        await conn.execute("INSERT INTO schema_migrations (version, name)"
                           " VALUES (1, '0001_another.sql')")
        with pytest.raises(MigrationError, match="0001_first.sql: version 1 was applied as"
                                                 " 0001_another.sql, another migration"):
            await migrate(conn, tmp_path)
    tables = {r["tablename"] for r in await db.fetch("SELECT tablename FROM pg_tables")}
    assert "mig_first" not in tables


async def test_two_migrations_racing_on_a_blank_database_both_succeed(server_conninfo):
    import psycopg

    from app.db import scratch_database
    from tests.migration_race import race

    async with scratch_database(server_conninfo, prefix="test_migrace") as info:

        async def migrator():
            async with await psycopg.AsyncConnection.connect(info) as conn:
                return await migrate(conn)

        first, second = await race(info, migrator)
    assert first == [m.version for m in discover()]
    assert second == []  # it waited for the first and found everything applied
