"""Serve an ASGI app on 127.0.0.1 in a background thread (the evals' blob server, tests)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import uvicorn

if TYPE_CHECKING:
    from app.manuals.blobs import BlobStore

START_TIMEOUT_S = 10.0


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_in_thread(app: Any, *, host: str = "127.0.0.1", port: int | None = None,
                    lifespan: Literal["on", "off"] = "off") -> Iterator[str]:
    """Yield the base URL (http://host:port) while the app is served; stop it afterwards.
    With lifespan="on" the app's start-up and shutdown run in the server's thread."""
    port = port or free_port(host)
    config = uvicorn.Config(app, host=host, port=port, log_level="error", lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"serve-{port}", daemon=True)
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


@contextmanager
def serve_blob_store(root: Path, *, mount: str = "") -> Iterator[BlobStore]:
    """A blob store in `root`, served over real HTTP on 127.0.0.1 (under `mount`) while open.
    Its addresses name the port it is served on."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from app.manuals.blobs import BlobStore, blob_app

    port = free_port()
    store = BlobStore(root, f"http://127.0.0.1:{port}{mount}")
    app = Starlette(routes=[Mount(mount, blob_app(store))]) if mount else blob_app(store)
    with serve_in_thread(app, port=port):
        yield store
