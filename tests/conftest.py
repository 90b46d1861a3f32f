"""Shared fixtures: an embedded PostgreSQL, a migrated+seeded template, a fresh db per test."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from evals._exit import skip_teardown

# A worker of pytest-xdist ends without Python's teardown once the session's exit handlers have
# run (the embedded PostgreSQL's release among them; its coverage data was sent at the
# session's end): freeing, one by one, what its tests loaded (spaCy's pipeline, litellm,
# onnxruntime) took each worker about 2 s after its last test, and pytest waits for its
# workers to end. Registered before the session's handlers, it runs after them; the two
# registered before it are skipped (logging's, which closes its handlers: no test logs to a
# file; execnet's, whose group is empty in a worker). What Python's teardown would say (a
# ResourceWarning of an object freed then) is not said.
if os.environ.get("PYTEST_XDIST_WORKER"):
    skip_teardown().code = 0

import app.chat.retry as retry
from app.db import Database, resolve_conninfo, scratch_database
from app.db.roles import APP_ROLE
from app.seed import seed_demo
from app.settings import DEFAULT_DATA_DIR, PROJECT_ROOT, Settings


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry back-off of a few milliseconds for every test: a retried call is what a test
    checks, never the wait. A module that tests the waits themselves defines its own
    `quick_backoff` (it overrides this one), or a test sets its values after this."""
    monkeypatch.setattr(retry, "RETRY_WAIT_MIN_S", 0.001)
    monkeypatch.setattr(retry, "RETRY_WAIT_MAX_S", 0.002)
    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 0.005)


# Below this much free memory in /dev/shm (a container's is often 64 MB) the files go to disk.
SHM_FREE_BYTES = 2 << 30


def db_files_dir(shm: Path = Path("/dev/shm")) -> Path:
    """Where the tests' embedded PostgreSQL keeps its files: TEST_PG_DIR when set, else a folder
    of this user's and this checkout's own in /dev/shm (memory), else `.data/test`.

    The suite copies and drops about a thousand databases, a few hundred files each. On a disk
    (ext4) the kernel's search for free inodes among recently deleted ones took a sixth of the
    machine's CPU (`perf record -a` over a whole run); in memory it takes none. What the tests
    write is thrown away, so nothing is lost when the machine restarts. It is never the
    server of `make serve` and `make eval` (`.data/pg`). The folder in /dev/shm is used only
    when there is room (SHM_FREE_BYTES) and when it is a real folder of this user's that no
    one else may write to: /dev/shm is everyone's, and its names can be guessed."""
    if os.environ.get("TEST_PG_DIR"):
        return Path(os.environ["TEST_PG_DIR"])
    on_disk = DEFAULT_DATA_DIR / "test"
    checkout = hashlib.sha256(str(PROJECT_ROOT).encode()).hexdigest()[:12]
    folder = shm / f"makerspace-tests-{os.getuid()}-{checkout}"
    try:
        if shutil.disk_usage(shm).free < SHM_FREE_BYTES:
            return on_disk
        # 0o755, not 0o700: run as root, pgserver runs postgres as a user of its own.
        folder.mkdir(mode=0o755, exist_ok=True)
        st = os.lstat(folder)
    except OSError:  # no /dev/shm, or not ours to write
        return on_disk
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return on_disk
    return folder


@pytest.fixture(scope="session")
def server_conninfo() -> str:
    """TEST_DATABASE_URL when given (a server where we may CREATE DATABASE), else an embedded
    server of the tests' own (`db_files_dir`)."""
    return resolve_conninfo(os.environ.get("TEST_DATABASE_URL"), db_files_dir())


@pytest.fixture(scope="session")
async def template_db(server_conninfo: str) -> AsyncIterator[str]:
    """A migrated database holding the demo seed, used as a template for every test db. It
    carries the working roles' grants (app/db/roles.py), as its copies then do."""
    async with scratch_database(server_conninfo, prefix="test_tmpl") as info:
        db = Database(info, max_size=2, role=APP_ROLE)
        await db.open()
        await seed_demo(db)
        await db.close()
        yield conninfo_to_dict(info)["dbname"]


@pytest.fixture(scope="session")
async def _kept_admin() -> AsyncIterator[list[psycopg.AsyncConnection]]:
    kept: list[psycopg.AsyncConnection] = []
    yield kept
    for conn in kept:
        await conn.close()


async def live_admin(server_conninfo: str,
                     kept: list[psycopg.AsyncConnection]) -> psycopg.AsyncConnection:
    """The connection kept in `kept`, made (again) when there is none or the server closed it
    (a TEST_DATABASE_URL server may close idle sessions). A closed session is seen only by
    sending something: an empty statement, as psycopg's pool checks its connections."""
    if kept and not kept[0].closed:
        try:
            await kept[0].execute("")
            return kept[0]
        except psycopg.OperationalError:
            pass
    conn = await psycopg.AsyncConnection.connect(server_conninfo, autocommit=True)
    if kept:
        await kept.pop().close()
    kept.append(conn)
    return conn


@pytest.fixture
async def admin(server_conninfo: str,
                _kept_admin: list[psycopg.AsyncConnection]) -> psycopg.AsyncConnection:
    """One connection a worker keeps to the tests' server, on which the fixtures make and drop
    their databases (`scratch_database(..., admin=admin)`): two connections fewer a test."""
    return await live_admin(server_conninfo, _kept_admin)


@pytest.fixture
async def db(server_conninfo: str, template_db: str,
             admin: psycopg.AsyncConnection) -> AsyncIterator[Database]:
    async with scratch_database(server_conninfo, prefix="test", template=template_db,
                                admin=admin) as info:
        database = Database(info, max_size=4)
        await database.open()
        try:
            yield database
        finally:
            await database.close()


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, model_chat="scripted/fake", session_secret="test-secret",
                    allowed_hosts=["test"])  # httpx's test client asks for http://test


@pytest.fixture(scope="session", autouse=True)
async def _close_model_clients() -> AsyncIterator[None]:
    """The wire transport pools one client per loop: close the session loop's at the end."""
    yield
    from app.chat.openai_wire import close_clients

    await close_clients()
