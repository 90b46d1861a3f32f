"""Forward-only migrations: numbered SQL files applied in order, each once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import tuple_row

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
# Any fixed number: serialises concurrent migrators on one database.
_LOCK_KEY = 727_001


class MigrationError(RuntimeError):
    """A migration file is misnamed, duplicated, or failed to apply."""


@dataclass(frozen=True)
class Migration:
    version: int
    path: Path


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migrations in `directory`, in order; misnamed or duplicate numbers are errors."""
    found: dict[int, Migration] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix != ".sql":
            continue
        match = _NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path}: migration files are named NNNN_snake_case.sql")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(
                f"{path}: version {version} already used by {found[version].path.name}"
            )
        found[version] = Migration(version, path)
    return [found[v] for v in sorted(found)]


async def migrate(conn: psycopg.AsyncConnection, directory: Path = MIGRATIONS_DIR, *,
                  table: str = "schema_migrations") -> list[int]:
    """Apply every pending migration, each in its own transaction. Returns the versions applied.
    `table` records what was applied: another set of migrations (the evals' run store) keeps
    its own."""
    if not re.fullmatch(r"[a-z_]+", table):
        raise MigrationError(f"migration table name {table!r} must be lower-case letters")
    migrations = discover(directory)
    await conn.set_autocommit(True)
    # The lock comes before anything is created, the bookkeeping table too: two migrators of a
    # blank database would otherwise both create it, and the second fail with UniqueViolation.
    await conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    applied: list[int] = []
    try:
        await conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(f"SELECT version, name FROM {table}")
            done = {row[0]: row[1] for row in await cur.fetchall()}
        # A version applied under another file's name is another migration: taking it as done
        # would skip this one for good (a renumbered file, say), so it is refused instead.
        for migration in migrations:
            was = done.get(migration.version)
            if was is not None and was != migration.path.name:
                raise MigrationError(
                    f"{migration.path.name}: version {migration.version} was applied as {was},"
                    " another migration; this one would never run. Renumber it, or bring the"
                    " database back to what its files say")
        for migration in migrations:
            if migration.version in done:
                continue
            sql = migration.path.read_text()
            try:
                async with conn.transaction():
                    await conn.execute(sql.encode())
                    await conn.execute(
                        f"INSERT INTO {table} (version, name) VALUES (%s, %s)",  # noqa: S608
                        (migration.version, migration.path.name),
                    )
            except psycopg.Error as exc:
                raise MigrationError(f"{migration.path.name} failed: {exc}") from exc
            applied.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied
