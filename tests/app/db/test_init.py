"""app.db's own helpers."""

import psycopg

from app.db import failure


def test_a_failure_is_one_line_naming_its_type_or_the_time_waited():
    exc = psycopg.OperationalError("connection refused\n\tIs the server running?")
    assert failure(exc) == "OperationalError: connection refused"
    assert failure(TimeoutError(), 10.0) == "no answer within 10 s"
    assert failure(TimeoutError()) == "no answer"
    assert failure(OSError()) == "OSError"


async def test_the_pool_s_connections_read_vectors_with_the_types_looked_up_once(db, monkeypatch):
    import asyncio
    import contextlib

    from psycopg.types import TypeInfo

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
