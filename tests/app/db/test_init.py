"""app.db's own helpers: failures in one line, the pool's types, database copies."""

import asyncio
import contextlib
import uuid
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import psutil
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types import TypeInfo

import app.db as appdb
from app.db import Database, _on_tmpfs, failure, scratch_database
from app.db.roles import APP_ROLE


def test_a_failure_is_one_line_naming_its_type_or_the_time_waited():
    exc = psycopg.OperationalError("connection refused\n\tIs the server running?")
    assert failure(exc) == "OperationalError: connection refused"
    assert failure(TimeoutError(), 10.0) == "no answer within 10 s"
    assert failure(TimeoutError()) == "no answer"
    assert failure(OSError()) == "OSError"


async def test_the_pool_s_connections_read_vectors_with_the_types_looked_up_once(db, monkeypatch):
    async def looked_up(cls, *args, **kwargs):
        raise AssertionError("a pool connection looked pgvector's types up again")

    # The pool has one connection open: holding three makes it connect two more.
    monkeypatch.setattr(TypeInfo, "fetch", classmethod(looked_up))
    async with asyncio.timeout(10), contextlib.AsyncExitStack() as held:
        conns = await asyncio.gather(*(held.enter_async_context(db.connection())
                                       for _ in range(3)))
        for conn in conns:
            row = await (await conn.execute("SELECT '[1,2,3]'::vector AS v")).fetchone()
            assert row["v"].to_list() == [1.0, 2.0, 3.0]


def test_memory_is_told_by_the_deepest_mount_holding_the_folder(tmp_path, monkeypatch):
    shm = tmp_path.resolve() / "shm"  # folders of the test's own: no link is followed on them
    mounts = [SimpleNamespace(mountpoint="/", fstype="ext4"),
              SimpleNamespace(mountpoint=str(shm), fstype="tmpfs"),
              SimpleNamespace(mountpoint=str(shm / "disk"), fstype="ext4")]
    monkeypatch.setattr(psutil, "disk_partitions", lambda all=False: mounts)
    assert _on_tmpfs(shm / "tests" / "pg")
    assert not _on_tmpfs(shm / "disk" / "pg")
    assert not _on_tmpfs(tmp_path.resolve() / "srv" / "pg")
    monkeypatch.setattr(psutil, "disk_partitions", lambda all=False: [])
    assert not _on_tmpfs(shm / "tests" / "pg")


def test_a_folder_reached_through_a_link_is_told_by_where_the_link_leads(tmp_path, monkeypatch):
    memory, disk = tmp_path / "memory", tmp_path / "disk"
    (memory / "pg").mkdir(parents=True)
    disk.mkdir()
    (disk / "shm").symlink_to(memory)  # as /dev/shm may be a link to /run/shm
    mounts = [SimpleNamespace(mountpoint="/", fstype="ext4"),
              SimpleNamespace(mountpoint=str(memory), fstype="tmpfs")]
    monkeypatch.setattr(psutil, "disk_partitions", lambda all=False: mounts)
    assert _on_tmpfs(disk / "shm" / "pg")


def _recording(admin):
    """The statements sent on `admin` from now on, and its own execute (which records none)."""
    sent = []
    execute = admin.execute

    async def recording(query, *args, **kwargs):
        sent.append(query)
        return await execute(query, *args, **kwargs)

    admin.execute = recording
    return sent, execute


async def _asked_about(server_conninfo):
    """Whether a server's files are in memory is asked only of PostgreSQL 15 or later, reached
    by its socket."""
    host = str(conninfo_to_dict(server_conninfo).get("host") or "")
    if not host.startswith("/"):
        pytest.skip("TEST_DATABASE_URL is reached over TCP: its files are never asked about")
    async with await psycopg.AsyncConnection.connect(server_conninfo) as conn:
        if conn.info.server_version < 150000:
            pytest.skip("TEST_DATABASE_URL runs PostgreSQL before 15: never asked about")


async def _copied(server_conninfo, template, monkeypatch, *, in_memory):
    """The copy's name, the statements create_database sent, and the machines it holds."""

    async def files_in_memory(admin):
        return in_memory

    monkeypatch.setattr(appdb, "_files_in_memory", files_in_memory)
    name = f"test_copy_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as admin:
        sent, execute = _recording(admin)
        await appdb.create_database(admin, name, template)
        try:
            async with await psycopg.AsyncConnection.connect(
                    make_conninfo(server_conninfo, dbname=name)) as copy:
                row = await (await copy.execute("SELECT count(*) FROM machines")).fetchone()
        finally:
            await execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    return name, sent, row[0]


async def test_a_copy_is_made_from_the_files_only_where_they_are_in_memory(
        server_conninfo, template_db, monkeypatch):
    name, sent, machines = await _copied(server_conninfo, template_db, monkeypatch,
                                         in_memory=True)
    assert sent == [f'CREATE DATABASE "{name}" TEMPLATE "{template_db}" STRATEGY FILE_COPY']
    assert machines > 0
    name, sent, copied = await _copied(server_conninfo, template_db, monkeypatch,
                                       in_memory=False)
    assert sent == [f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"'] and copied == machines


async def test_the_tests_server_is_said_to_be_in_memory_as_its_data_folder_is(
        server_conninfo, monkeypatch):
    await _asked_about(server_conninfo)
    monkeypatch.setattr(appdb, "_in_memory", {})  # decided again, not remembered
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as admin:
        folder = (await (await admin.execute("SHOW data_directory")).fetchone())[0]
        sent, _ = _recording(admin)
        assert await appdb._files_in_memory(admin) is _on_tmpfs(Path(folder))
        assert await appdb._files_in_memory(admin) is _on_tmpfs(Path(folder))
    assert sent == ["SHOW data_directory"]  # once a server and user


async def test_a_server_is_not_said_to_be_in_memory_when_its_role_may_not_read_where(
        server_conninfo, monkeypatch):
    await _asked_about(server_conninfo)
    monkeypatch.setattr(appdb, "_in_memory", {})
    monkeypatch.setattr(appdb, "_on_tmpfs", lambda path: True)
    role = f"test_nobody_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as admin:
        await admin.execute(f'CREATE ROLE "{role}"')
        try:
            await admin.execute(f'SET ROLE "{role}"')
            sent, _ = _recording(admin)
            assert await appdb._files_in_memory(admin) is False
            assert sent == ["SHOW data_directory"]  # asked, and refused
        finally:
            await admin.execute("RESET ROLE")
            await admin.execute(f'DROP ROLE "{role}"')


async def test_a_failed_question_says_no_this_time_only(monkeypatch):
    monkeypatch.setattr(appdb, "_in_memory", {})
    monkeypatch.setattr(appdb, "_on_tmpfs", lambda path: True)
    answers = [psycopg.OperationalError("the connection was lost"), "/dev/shm/pg"]

    async def execute(query, *args, **kwargs):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer

        async def fetchone():
            return (answer,)

        return SimpleNamespace(fetchone=fetchone)

    admin = SimpleNamespace(info=SimpleNamespace(host="/run/pg", port=5432, user="u",
                                                 server_version=160000), execute=execute)
    assert await appdb._files_in_memory(admin) is False  # lost: no, and nothing kept
    assert await appdb._files_in_memory(admin) is True  # asked again
    assert answers == []


@pytest.mark.parametrize(("host", "version"), [("127.0.0.1", 160000), ("/run/pg", 140000)])
async def test_a_server_over_tcp_or_before_15_is_not_asked_where_its_files_are(
        monkeypatch, host, version):
    monkeypatch.setattr(appdb, "_in_memory", {})
    monkeypatch.setattr(appdb, "_on_tmpfs", lambda path: True)

    async def execute(query, *args, **kwargs):
        raise AssertionError(f"asked {query!r}")

    # Over TCP the files may be on another machine; before 15, CREATE DATABASE has no STRATEGY.
    admin = SimpleNamespace(info=SimpleNamespace(host=host, port=5432, user="u",
                                                 server_version=version), execute=execute)
    assert await appdb._files_in_memory(admin) is False


async def test_a_pool_working_as_another_role_reads_and_writes_vectors(
        server_conninfo, template_db, admin):
    async with scratch_database(server_conninfo, prefix="test_role", template=template_db,
                                admin=admin) as info:
        db = Database(info, max_size=3, role=APP_ROLE)
        await db.open()
        try:
            async with asyncio.timeout(10), contextlib.AsyncExitStack() as held:
                conns = await asyncio.gather(*(held.enter_async_context(db.connection())
                                               for _ in range(3)))
                for conn in conns:
                    assert (await (await conn.execute("SELECT current_user AS u")).fetchone()
                            )["u"] == APP_ROLE
                    row = await (await conn.execute("SELECT %s::vector AS v",
                                                    (np.array([1.0, 2.0]),))).fetchone()
                    assert row["v"].to_list() == [1.0, 2.0]
        finally:
            await db.close()


async def test_a_scratch_database_is_made_and_dropped_on_the_connection_given(
        server_conninfo, template_db):
    async with await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True) as admin:
        sent, execute = _recording(admin)
        async with scratch_database(server_conninfo, prefix="test_given", template=template_db,
                                    admin=admin) as info:
            name = conninfo_to_dict(info)["dbname"]
            async with await psycopg.AsyncConnection.connect(info) as copy:
                row = await (await copy.execute("SELECT count(*) FROM machines")).fetchone()
                assert row[0] > 0
        made = [q for q in sent if "DATABASE" in q]
        assert made[0].startswith(f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"')
        assert made[1:] == [f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)']
        assert not admin.closed  # the caller's, still open
        gone = await execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        assert await gone.fetchone() is None
