"""A TCP proxy on 127.0.0.1 in front of a PostgreSQL server that a test can freeze: frozen, it
accepts connections and reads what is sent but passes nothing on, as a server stopped with
SIGSTOP does (tests only)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from psycopg.conninfo import conninfo_to_dict, make_conninfo


def _thawed() -> asyncio.Event:
    event = asyncio.Event()
    event.set()
    return event


@dataclass
class Proxy:
    conninfo: str
    running: asyncio.Event = field(default_factory=_thawed)  # clear while frozen

    def freeze(self) -> None:
        self.running.clear()

    def thaw(self) -> None:
        self.running.set()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                running: asyncio.Event) -> None:
    try:
        while data := await reader.read(65536):
            await running.wait()  # held, as a stopped process holds what it was sent
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


@asynccontextmanager
async def pg_proxy(server_conninfo: str) -> AsyncIterator[Proxy]:
    """A proxy to the server of `server_conninfo`; yields the conninfo through it."""
    params = conninfo_to_dict(server_conninfo)
    host, port = str(params.get("host") or "/tmp"), str(params.get("port") or "5432")
    tasks: set[asyncio.Task[None]] = set()
    proxy: Proxy

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        await proxy.running.wait()  # a frozen server: accepted, never answered
        if host.startswith("/"):
            server_r, server_w = await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        else:
            server_r, server_w = await asyncio.open_connection(host, int(port))
        for t in (asyncio.create_task(_pipe(client_r, server_w, proxy.running)),
                  asyncio.create_task(_pipe(server_r, client_w, proxy.running))):
            tasks.add(t)
            t.add_done_callback(tasks.discard)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port_here = server.sockets[0].getsockname()[1]
    proxy = Proxy(make_conninfo(server_conninfo, host="127.0.0.1", port=str(port_here)))
    try:
        yield proxy
    finally:
        proxy.thaw()
        server.close()
        for t in list(tasks):
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
