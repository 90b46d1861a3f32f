"""Where the tests' database server keeps its files: a folder of the user's own in memory, or
on disk when memory is short or the folder is not safely theirs."""

import os
import shutil
from collections import namedtuple

import psycopg

from app.settings import DEFAULT_DATA_DIR
from tests.conftest import db_files_dir, live_admin

ON_DISK = DEFAULT_DATA_DIR / "test"
Usage = namedtuple("Usage", "total used free")


def test_a_folder_of_the_user_s_own_in_memory(tmp_path, monkeypatch):
    monkeypatch.delenv("TEST_PG_DIR", raising=False)
    folder = db_files_dir(tmp_path)
    assert folder.parent == tmp_path and folder.name.startswith(f"makerspace-tests-{os.getuid()}-")
    assert folder.is_dir() and db_files_dir(tmp_path) == folder  # the same folder next time
    monkeypatch.setenv("TEST_PG_DIR", str(tmp_path / "mine"))
    assert db_files_dir(tmp_path) == tmp_path / "mine"


def test_on_disk_when_memory_is_short_or_the_folder_is_not_safely_the_user_s(tmp_path,
                                                                             monkeypatch):
    monkeypatch.delenv("TEST_PG_DIR", raising=False)
    folder = db_files_dir(tmp_path)
    folder.chmod(0o777)  # anyone may write in it
    assert db_files_dir(tmp_path) == ON_DISK
    folder.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.symlink_to(elsewhere)  # planted where the folder would be
    assert db_files_dir(tmp_path) == ON_DISK
    folder.unlink()
    assert db_files_dir(tmp_path / "no-such-folder") == ON_DISK
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(64 << 20, 0, 64 << 20))
    assert db_files_dir(tmp_path) == ON_DISK  # a container's 64 MB


async def test_the_kept_admin_connection_is_made_again_once_the_server_closed_it(
        server_conninfo):
    kept = []
    conn = await live_admin(server_conninfo, kept)
    assert await live_admin(server_conninfo, kept) is conn  # kept, not made again
    pid = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
    with psycopg.connect(server_conninfo, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert not conn.closed  # nothing said so yet: only sending something tells
    again = await live_admin(server_conninfo, kept)
    assert again is not conn and kept == [again] and conn.closed
    assert (await (await again.execute("SELECT 1")).fetchone()) == (1,)
    await again.close()
