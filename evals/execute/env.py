"""The eval's own environment: a fresh database cloned from a template that holds the demo
seed, the eval tickets and the ingested fixture manuals; the manuals served over real HTTP on
127.0.0.1; a database of its own for each scenario conversation; and the clean-up of what a
killed run left behind."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from app.capabilities import PageContext, Photo
from app.catalog import index as index_catalog
from app.chat.compose import ComposedChat
from app.db import Database, connect, create_database, failure
from app.db.leftovers import SCRATCH_DB_PREFIX, SCRATCH_DIR_PREFIX, remove_leftovers
from app.embed import Embedder
from app.identity import Identity
from app.manuals import ManualLibrary
from app.manuals.blobs import BlobStore, serve_blob_store
from app.manuals.demo import DEMO_MANUALS, FIXTURE_DIR, seed_manuals
from app.manuals.library import blob_key
from app.seed import DEMO_MACHINES, seed_demo
from app.settings import Settings
from evals.fixtures.lab_catalog import CATALOGS, Catalog, seed_catalog
from evals.fixtures.tickets import seed_eval_tickets
from evals.settings import PROJECT_ROOT

BLOB_PORT = 8766  # the eval's manuals are served here when it is free

# Scratch databases and blob folders carry the pid of the run that made them, so a later start
# (of a run, the app or the workspace) can remove what a killed one left behind.
DB_PREFIX = SCRATCH_DB_PREFIX
BLOBS_PREFIX = SCRATCH_DIR_PREFIX
# Every call to the server is bounded, so a server that stops or freezes mid-run ends the run
# with an error in bounded time: connecting (ADMIN_CONNECT_S), making or dropping a database
# (ADMIN_TIMEOUT_S: a copy of the template takes well under a second here), and each of the
# cases' own statements (ENV_TIMEOUT_S).
ADMIN_CONNECT_S = 5.0
ADMIN_TIMEOUT_S = 30.0
ENV_TIMEOUT_S = 10.0


@asynccontextmanager
async def _admin(server_conninfo: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A connection to the server for CREATE and DROP DATABASE, bounded in time."""
    async with asyncio.timeout(ADMIN_CONNECT_S + ADMIN_TIMEOUT_S):
        async with await connect(server_conninfo, ADMIN_TIMEOUT_S, autocommit=True,
                                 connect_timeout_s=ADMIN_CONNECT_S) as admin:
            yield admin


async def _drop_or_say(server_conninfo: str, name: str) -> None:
    """Drop a database of this run; if the server is gone, say so in one line (the next start
    removes it, clean_stale) instead of ending the run's teardown with a traceback."""
    try:
        async with _admin(server_conninfo) as admin:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    except (psycopg.Error, TimeoutError, OSError) as exc:
        print(f"warning: the run's database {name} was not dropped ({failure(exc)}); the next run"
              " removes it", file=sys.stderr)


async def clean_stale(server_conninfo: str) -> list[str]:
    """Drop the scratch databases and blob folders of eval runs whose process is gone."""
    return await remove_leftovers(server_conninfo)


@dataclass
class EvalEnv:
    db: Database
    library: ManualLibrary
    settings: Settings
    catalog: Catalog = "demo"
    # Where the run's database came from: scenarios clone the template once a conversation.
    server_conninfo: str | None = None
    template: str | None = None
    next_clone: asyncio.Task[str] | None = None  # a scenario's database, made ahead
    # What compose_case read from the database and the photos, per catalogue, audience, page,
    # selection and photos: write tools are stubbed, so within a phase the same context
    # composes to the same thing, and a run composes each once instead of once a case.
    composed: dict[tuple[Any, ...], asyncio.Task[tuple[Identity | None, PageContext,
                                                      ComposedChat, tuple[Photo, ...]]]] = \
        field(default_factory=dict)
    # Several shards of one phase may ask for its catalogue at once (a cluster's worker).
    seeding: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def use_catalog(self, catalog: Catalog) -> None:
        """Seed what `catalog` has beyond the catalogue held so far (once): a run's phases go
        demo, lab, large, each after every item of the one before."""
        async with self.seeding:
            if CATALOGS.index(catalog) > CATALOGS.index(self.catalog):
                await seed_catalog(self.db, catalog, have=self.catalog)
                await index_catalog(self.db, self.library.embedder)
                self.catalog = catalog
                self.composed.clear()


TEMPLATE_PREFIX = "eval_tmpl_"
# What a template database is made from: a change to any of these makes a new one.
_TEMPLATE_SOURCES = ("app/db/migrations/*.sql", "app/seed.py", "app/catalog/*.py",
                     "app/manuals/*.py", "app/embed.py", "evals/fixtures/tickets.py",
                     "evals/fixtures/manuals/*.pdf")


def template_name(embedder: Embedder) -> str:
    """The template database for this seed, these manuals and this embedder."""
    root = PROJECT_ROOT
    h = hashlib.sha256(embedder.name.encode())
    for pattern in _TEMPLATE_SOURCES:
        for path in sorted(root.glob(pattern)):
            h.update(path.name.encode() + path.read_bytes())
    return TEMPLATE_PREFIX + h.hexdigest()[:16]


async def ensure_template(server_conninfo: str, embedder: Embedder) -> str:
    """A database holding the migrated demo seed, the eval tickets and the ingested fixture
    manuals, made once per content (and embedder) and cloned by every run: the passages are
    embedded once, not on every run."""
    name = template_name(embedder)
    async with _admin(server_conninfo) as admin:
        cur = await admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if await cur.fetchone():
            return name
        build = f"{DB_PREFIX}{os.getpid()}_tmpl_{uuid.uuid4().hex[:8]}"
        await create_database(admin, build)
    try:
        db = Database(make_conninfo(server_conninfo, dbname=build), max_size=2)
        await db.open()
        try:
            await seed_demo(db, DEMO_MACHINES)  # the fixture catalogue, always
            await seed_eval_tickets(db)
            await index_catalog(db, embedder)
            with tempfile.TemporaryDirectory(prefix=f"{BLOBS_PREFIX}{os.getpid()}-") as tmp:
                await seed_manuals(ManualLibrary(db, BlobStore(Path(tmp), "http://unused"),
                                                 embedder))
        finally:
            await db.close()
        async with _admin(server_conninfo) as admin:
            try:
                await admin.execute(f'ALTER DATABASE "{build}" RENAME TO "{name}"')
            except psycopg.errors.DuplicateDatabase:
                pass  # another run made it first: use theirs
    finally:
        await _drop_or_say(server_conninfo, build)
    return name


def _put_fixture_manuals(store: BlobStore) -> None:
    for file, slug, _ in DEMO_MANUALS:
        store.put(blob_key(file, slug), (FIXTURE_DIR / file).read_bytes())


@asynccontextmanager
async def eval_env(server_conninfo: str, settings: Settings, embedder: Embedder
                   ) -> AsyncIterator[EvalEnv]:
    """A fresh database with the demo seed, the eval tickets and the fixture manuals (a clone
    of the template), the manuals served over real HTTP on 127.0.0.1; all gone afterwards."""
    pid = os.getpid()
    template = await ensure_template(server_conninfo, embedder)
    async with AsyncExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{BLOBS_PREFIX}{pid}-"))
        # On one port when it is free: a manual's address is in what the model reads, and a
        # port that changed every run would make every call after a manual search a miss of
        # the call cache. Another run at the same time gets any free port (and misses).
        serving = serve_blob_store(Path(tmp), mount="/blobs", prefer_port=BLOB_PORT)

        async def blobs() -> BlobStore:
            # The blob server starts on a thread while PostgreSQL copies the template.
            store = await asyncio.to_thread(serving.__enter__)
            stack.push(serving.__exit__)
            await asyncio.to_thread(_put_fixture_manuals, store)
            return store

        store, info = await asyncio.gather(
            blobs(), stack.enter_async_context(cloned_database(server_conninfo, template)))
        db = Database(info, max_size=8, timeout_s=ENV_TIMEOUT_S)
        await db.open()
        env = EvalEnv(db, ManualLibrary(db, store, embedder), settings,
                      server_conninfo=server_conninfo, template=template)
        try:
            yield env
        finally:
            await db.close()
            if env.next_clone is not None:  # made ahead for a conversation that never came
                try:
                    await drop_clone(env, await env.next_clone)
                except Exception:
                    pass  # never made; a later run removes what is left (clean_stale)


SPARE_PREFIX = "eval_spare_"


@asynccontextmanager
async def cloned_database(server_conninfo: str, template: str) -> AsyncIterator[str]:
    """A copy of the template for this run, dropped afterwards. Copying takes about half a
    second here, so each run leaves a spare copy made while it runs, and the next run takes
    that spare by renaming it (instant); without a spare it copies the template itself."""
    name = f"{DB_PREFIX}{os.getpid()}_{uuid.uuid4().hex[:12]}"
    spare = SPARE_PREFIX + template.removeprefix(TEMPLATE_PREFIX)
    async with _admin(server_conninfo) as admin:
        try:
            await admin.execute(f'ALTER DATABASE "{spare}" RENAME TO "{name}"')
        except (psycopg.errors.InvalidCatalogName, psycopg.errors.ObjectInUse,
                psycopg.errors.UndefinedObject):
            await create_database(admin, name, template)

    async def make_spare() -> None:
        try:
            async with _admin(server_conninfo) as admin:
                await create_database(admin, spare, template)
        except (psycopg.Error, TimeoutError, OSError):
            pass  # another run made one, or the template is busy: the next run copies

    spare_made = asyncio.create_task(make_spare())
    try:
        yield make_conninfo(server_conninfo, dbname=name)
    finally:
        await asyncio.gather(spare_made, return_exceptions=True)
        await _drop_or_say(server_conninfo, name)


async def _clone(env: EvalEnv) -> str:
    assert env.server_conninfo is not None and env.template is not None
    # "_conv_": never mistaken for a run's own database (DB_PREFIX, pid, then 12 hex digits)
    name = f"{DB_PREFIX}{os.getpid()}_conv_{uuid.uuid4().hex[:10]}"
    async with _admin(env.server_conninfo) as admin:
        await create_database(admin, name, env.template)
    return name


async def drop_clone(env: EvalEnv, name: str) -> None:
    assert env.server_conninfo is not None
    async with _admin(env.server_conninfo) as admin:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def conversation_database(env: EvalEnv) -> AsyncIterator[tuple[Database, float]]:
    """A database of this conversation's own, cloned from the run's template; dropped after,
    whatever happens. Yields it and the seconds the conversation waited for it: the next
    conversation's clone is made while this one runs (copying takes 60–500 ms here under the
    local model's load), so a conversation mostly finds one ready."""
    if env.server_conninfo is None or env.template is None:
        raise RuntimeError("scenarios need the eval environment's template database")
    started = time.perf_counter()
    ready = env.next_clone
    env.next_clone = None
    try:
        name = await ready if ready is not None else await _clone(env)
    except Exception:
        name = await _clone(env)  # the one made ahead failed: make this one now
    took = time.perf_counter() - started
    if env.next_clone is None:  # one made ahead at a time, whatever runs at once
        env.next_clone = asyncio.create_task(_clone(env))
    db = Database(make_conninfo(env.server_conninfo, dbname=name), max_size=2,
                  timeout_s=ENV_TIMEOUT_S)
    try:
        await db.open()
        yield db, took
    finally:
        await db.close()
        await drop_clone(env, name)
