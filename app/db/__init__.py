"""PostgreSQL access: one async pool, migrations at open, scratch databases for evals and tests."""

from __future__ import annotations

import asyncio
import math
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psutil
import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.adapt import AdaptersMap
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from app.db.embedded import start_embedded, stop_orphaned
from app.db.migrate import MigrationError, migrate
from app.db.roles import Access, prepare, take_role

__all__ = ["Database", "MigrationError", "connect", "create_database", "resolve_conninfo",
           "scratch_database"]

Row = dict[str, Any]


def failure(exc: BaseException, timeout_s: float | None = None) -> str:
    """A database call's failure in one line: "no answer within N s" for a timeout, else the
    exception's type and the first line of its message (psycopg's run to several)."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s" if timeout_s else "no answer"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def resolve_conninfo(database_url: str | None, data_dir: Path) -> str:
    """`DATABASE_URL` when given, else the embedded server's URI (started on demand). With
    `DATABASE_URL`, an embedded server in `data_dir` that no live process owns (its owners were
    killed) is stopped: nothing else would ever stop it."""
    if database_url:
        stop_orphaned(data_dir)
        return database_url
    return start_embedded(data_dir)


async def connect(conninfo: str, timeout_s: float | None = None, *, autocommit: bool = False,
                  connect_timeout_s: float | None = None) -> psycopg.AsyncConnection[Any]:
    """One connection; with `timeout_s`, connecting gives up after it (or after
    `connect_timeout_s`) and statements end on the server after it (statement_timeout). A
    frozen server enforces no statement_timeout: wrap the statements in asyncio.timeout too."""
    if timeout_s is None:
        return await psycopg.AsyncConnection.connect(conninfo, autocommit=autocommit)
    return await psycopg.AsyncConnection.connect(
        conninfo, autocommit=autocommit,
        connect_timeout=max(1, math.ceil(connect_timeout_s or timeout_s)),
        options=f"-c statement_timeout={int(timeout_s * 1000)}")


class Database:
    """An async connection pool on one database, migrated when opened.

    With `role` (app/db/roles.py), migrations and grants run as `conninfo`'s user (the owner)
    and the pool works as that least-privilege role; without, the pool works as that user.

    With `timeout_s`, no call waits longer than that: connecting (connect_timeout), waiting
    for a pooled connection, and each statement, on the server (statement_timeout) and here
    (a server that is frozen enforces nothing, so the client gives up too). TimeoutError then.
    """

    def __init__(self, conninfo: str, *, max_size: int = 10, app_schema: bool = True,
                 migrations: tuple[Path, str] | None = None, timeout_s: float | None = None,
                 role: str | None = None) -> None:
        self.conninfo = conninfo  # the owner's: migrations, and statements typed by hand
        self._max_size = max_size
        self.timeout_s = timeout_s
        # False: the app's schema (and pgvector) is not this pool's: the eval run store
        # has its own migrations (`migrations`: their folder and the table recording them),
        # applied at open on the connection that sets up the role.
        self._app_schema = app_schema
        self._migrations = migrations
        self._role = role
        self.access: Access | None = None  # how the pool reaches `role`, once open
        self._pool: AsyncConnectionPool | None = None

    async def open(self) -> None:
        # pgvector's types, looked up once (four queries) on the migrating connection: the
        # pool's connections start from its adapters instead of each asking again. (The
        # types' ids are the database's own; an extension dropped and made again while the
        # pool is open would need the pool opened again, as it did before for the
        # connections it held.)
        adapters: AdaptersMap | None = None
        if self._app_schema or self._migrations is not None or self._role is not None:
            async with await connect(self.conninfo, self.timeout_s) as conn:
                if self._app_schema:
                    await migrate(conn)
                    await register_vector_async(conn)
                    adapters = conn.adapters
                if self._migrations is not None:
                    directory, table = self._migrations
                    await migrate(conn, directory, table=table)
                if self._role is not None:
                    await conn.set_autocommit(True)
                    self.access = await prepare(conn, self.conninfo, self._role)
        access = self.access

        async def configure(conn: psycopg.AsyncConnection) -> None:
            await conn.set_autocommit(True)
            if access is not None:
                await take_role(conn, access)
            conn.row_factory = dict_row  # type: ignore[assignment]

        kwargs: dict[str, Any] = {} if adapters is None else {"context": adapters}
        limits: dict[str, Any] = {}
        if self.timeout_s is not None:
            kwargs |= {"connect_timeout": max(1, math.ceil(self.timeout_s)),
                       "options": f"-c statement_timeout={int(self.timeout_s * 1000)}"}
            limits = {"timeout": self.timeout_s}
        self._pool = AsyncConnectionPool(
            access.conninfo if access is not None else self.conninfo, min_size=1,
            max_size=self._max_size, configure=configure, kwargs=kwargs, open=False, **limits)
        async with asyncio.timeout(self.timeout_s):
            await self._pool.open(wait=True, timeout=self.timeout_s or 30.0)

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close(timeout=self.timeout_s or 5.0)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Row]]:
        if self._pool is None:
            raise RuntimeError("database is not open")
        # The whole use of the connection is bounded: a statement on a frozen server would
        # otherwise wait forever.
        async with asyncio.timeout(self.timeout_s), self._pool.connection() as conn:
            yield conn  # type: ignore[misc]

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[psycopg.AsyncConnection[Row]]:
        async with self.connection() as conn, conn.transaction():
            yield conn

    async def fetch(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        async with self.connection() as conn:
            cur = await conn.execute(sql, params)  # type: ignore[arg-type]
            return await cur.fetchall()

    async def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> None:
        async with self.connection() as conn:
            await conn.execute(sql, params)  # type: ignore[arg-type]

    async def table_counts(self) -> dict[str, int]:
        """Row counts of every table in the public schema (used to prove nothing was written)."""
        tables = await self.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        counts: dict[str, int] = {}
        for row in tables:
            name = row["tablename"]
            got = await self.fetchone(f'SELECT count(*) AS n FROM "{name}"')
            counts[name] = int(got["n"]) if got else 0
        return counts


# Per server (its socket folder or host, and port) and user: whether its files are in memory.
_in_memory: dict[tuple[str, int, str], bool] = {}


def _on_tmpfs(path: Path) -> bool:
    """Whether `path` is on a file system in memory (tmpfs), by the deepest mount holding it
    (its links followed: /dev/shm may be a link to /run/shm)."""
    path = Path(os.path.realpath(path))
    mounts = [(Path(p.mountpoint), p.fstype) for p in psutil.disk_partitions(all=True)]
    holding = [(mount, kind) for mount, kind in mounts if path.is_relative_to(mount)]
    return max(holding, key=lambda m: len(m[0].parts))[1] == "tmpfs" if holding else False


async def _files_in_memory(admin: psycopg.AsyncConnection[Any]) -> bool:
    """Whether the server's data folder is in memory: only said of a server on this machine
    (reached through a socket folder), of PostgreSQL 15 or later (which can copy a database
    either way), whose role may read where its data is. Anything else says no: the copy is
    then made PostgreSQL's way, which is never wrong, only slower here."""
    info = admin.info
    key = (info.host, info.port, info.user)
    if key not in _in_memory:
        where: Path | None = None
        if info.host.startswith("/") and info.server_version >= 150000:
            try:
                row = await (await admin.execute("SHOW data_directory")).fetchone()
                where = Path(row[0]) if row else None
            except psycopg.errors.InsufficientPrivilege:
                pass  # no right to read it, for good (autocommit: the connection goes on)
            except psycopg.Error:
                return False  # this time only: a cancelled call or a lost connection
        _in_memory[key] = where is not None and _on_tmpfs(where)
    return _in_memory[key]


async def create_database(admin: psycopg.AsyncConnection[Any], name: str,
                          template: str | None = None) -> None:
    """CREATE DATABASE `name` as a copy of `template` (else of template1), on an autocommit
    connection. PostgreSQL copies through its write-ahead log, which a server on a disk
    wants: the other way, copying the files, makes it write every database's changed pages
    (a checkpoint) twice per copy. A server whose files are in memory (the tests' own) loses
    nothing by that, and a copy and its drop cost its CPU 23 ms instead of 34."""
    strategy = " STRATEGY FILE_COPY" if await _files_in_memory(admin) else ""
    suffix = f' TEMPLATE "{template}"' if template else ""
    await admin.execute(f'CREATE DATABASE "{name}"{suffix}{strategy}')


@asynccontextmanager
async def _admin(server_conninfo: str, admin: psycopg.AsyncConnection[Any] | None
                 ) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    if admin is not None:
        yield admin
        return
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as conn:
        yield conn


@asynccontextmanager
async def scratch_database(
    server_conninfo: str, *, prefix: str = "scratch", template: str | None = None,
    admin: psycopg.AsyncConnection[Any] | None = None,
) -> AsyncIterator[str]:
    """Create a fresh database on the server, yield its conninfo, drop it afterwards. With
    `admin`, an open autocommit connection to that server kept by the caller (the tests keep
    one), both are sent on it instead of on a connection each."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    async with _admin(server_conninfo, admin) as conn:
        await create_database(conn, name, template)
    try:
        yield make_conninfo(server_conninfo, dbname=name)
    finally:
        async with _admin(server_conninfo, admin) as conn:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
