"""The eval's environment: databases of a conversation's own, made ahead and dropped."""

import asyncio

import psycopg
import pytest

from app.embed import HashEmbedder
from app.settings import Settings
from evals.execute.env import conversation_database, eval_env


async def test_two_conversations_at_once_do_not_see_each_others_rows(env, tmp_path):
    async def one():
        async with conversation_database(env) as (db, _):
            await db.execute("INSERT INTO tickets (machine_id, title) SELECT id, 'mine'"
                             " FROM machines LIMIT 1")
            await asyncio.sleep(0.05)
            row = await db.fetchone("SELECT count(*) AS n FROM tickets WHERE title = 'mine'")
            return row["n"]

    assert await asyncio.gather(one(), one()) == [1, 1]
    # and only one database is made ahead for the next conversation, not one per conversation
    ahead = await env.next_clone
    async with await psycopg.AsyncConnection.connect(env.server_conninfo) as conn:
        cur = await conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                 (f"eval\\_p{__import__('os').getpid()}\\_conv\\_%",))
        assert [r[0] for r in await cur.fetchall()] == [ahead]


async def test_the_clone_is_dropped_after_an_error(env):
    name = None
    with pytest.raises(RuntimeError, match="boom"):
        async with conversation_database(env) as (db, _):
            name = db.conninfo
            raise RuntimeError("boom")
    dbname = psycopg.conninfo.conninfo_to_dict(name)["dbname"]
    async with await psycopg.AsyncConnection.connect(env.server_conninfo) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,))
        assert await cur.fetchone() is None


async def test_the_clone_made_ahead_is_dropped_with_the_environment(server_conninfo, tmp_path):
    async with eval_env(server_conninfo, Settings(data_dir=tmp_path), HashEmbedder()) as env:
        async with conversation_database(env):
            pass
        async with conversation_database(env):
            pass
        ahead = await env.next_clone
    async with await psycopg.AsyncConnection.connect(server_conninfo) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (ahead,))
        assert await cur.fetchone() is None


async def test_the_manuals_are_served_on_one_port_when_it_is_free(server_conninfo, tmp_path,
                                                                 monkeypatch):
    # A manual's address is in what the model reads: the same port every run keeps the call
    # cache's keys the same; a second environment at once gets another port.
    from app.embed import HashEmbedder
    from app.serving import free_port
    from app.settings import Settings
    from evals.execute import env

    # A port of this test's own: other tests' environments, in other workers, take BLOB_PORT
    # (one did, between a test that it was free and its use).
    preferred = free_port()
    monkeypatch.setattr(env, "BLOB_PORT", preferred)
    settings = Settings(data_dir=tmp_path, model_chat="scripted/fake")
    async with env.eval_env(server_conninfo, settings, HashEmbedder()) as one, \
            env.eval_env(server_conninfo, settings, HashEmbedder()) as two:
        ports = [e.library.store.address("x").split(":")[2].split("/")[0] for e in (one, two)]
    assert ports[0] == str(preferred) and ports[1] != ports[0]
