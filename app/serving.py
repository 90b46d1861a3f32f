"""Serving on 127.0.0.1: a free port for a server (the local model's), and an ASGI app served in
a background thread (the blob server, tests)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import psutil

START_TIMEOUT_S = 10.0


def free_port(host: str = "127.0.0.1", prefer: int | None = None) -> int:
    """A port nothing listens on: `prefer` when it is free, else any."""
    with bound_socket(host, prefer) as s:
        return int(s.getsockname()[1])


def listens(pid: int, port: int) -> bool:
    """Whether process `pid` listens on TCP `port`: a port free_port chose may be given to
    another process before the child it was chosen for binds it, and that one may answer."""
    try:
        conns = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.Error:  # gone, or not ours to read
        return False
    return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in conns)


def bound_socket(host: str = "127.0.0.1", prefer: int | None = None) -> socket.socket:
    """A socket bound to `prefer` when it is free, else to any free port: held, so no other
    process can take the port between choosing it and serving on it."""
    for port in ([prefer] if prefer else []) + [0]:
        s = socket.socket()
        try:
            s.bind((host, port))
        except OSError:
            s.close()
            continue
        return s
    raise OSError("no free port")


@contextmanager
def serve_in_thread(app: Any, *, host: str = "127.0.0.1", port: int | None = None,
                    lifespan: Literal["on", "off"] = "off",
                    sock: socket.socket | None = None) -> Iterator[str]:
    """Yield the base URL (http://host:port) while the app is served; stop it afterwards.
    With lifespan="on" the app's start-up and shutdown run in the server's thread. `sock`, a
    bound socket, is served on (and closed at the end)."""
    if sock is not None:
        host, port = sock.getsockname()[:2]
        sockets = [sock]
    else:
        port = port or free_port(host)
        sockets = None
    import uvicorn  # here: a command that serves nothing does not pay its import

    config = uvicorn.Config(app, host=host, port=port, log_level="error", lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets},
                              name=f"serve-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"could not serve on {host}:{port}")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        if sock is not None:
            sock.close()

