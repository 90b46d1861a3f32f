"""The blob store: manual PDFs in a folder, served over HTTP by a small Starlette app."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from app.manuals.pdf import PDF_MAGIC
from app.serving import bound_socket, serve_in_thread

if TYPE_CHECKING:  # the server's parts are imported where the store is served: a command
    # that serves no manual (an endpoint run) does not pay uvicorn's and Starlette's 0.035 s
    from starlette.applications import Starlette

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*\.pdf$")


class BlobKeyError(ValueError):
    """A key that is not a plain relative path to a .pdf inside the store."""


class BlobStore:
    """A folder of PDFs addressed by key (e.g. 'manuals/form-4-manual.pdf')."""

    def __init__(self, root: Path, base_url: str) -> None:
        self.root = root.resolve()
        self.base_url = base_url.rstrip("/")

    def path(self, key: str) -> Path:
        """The file for a key; anything that could leave the store is refused."""
        if not _KEY.match(key) or ".." in key.split("/"):
            raise BlobKeyError(f"invalid blob key {key!r}")
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root):
            raise BlobKeyError(f"blob key {key!r} leaves the store")
        return path

    def put(self, key: str, data: bytes) -> str:
        if not data.startswith(PDF_MAGIC):
            raise BlobKeyError(f"{key}: only PDFs are stored")
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a reader never sees half a file
        return key

    def address(self, key: str) -> str:
        """The stored address (URL) of a key."""
        return f"{self.base_url}/{key}"

    def serves(self, url: str) -> bool:
        """Whether `url` is an address of this store: same scheme, host and port, under its
        path once dot-segments are resolved (as the HTTP client will resolve them)."""
        if re.search(r"%2[ef]|%5c", url, re.IGNORECASE):
            return False  # an encoded dot or slash: the server may decode it to leave the store
        try:
            target, base = httpx.URL(url), httpx.URL(self.base_url + "/")
        except httpx.InvalidURL:
            return False
        return (target.scheme, target.host, target.port, target.userinfo) == \
            (base.scheme, base.host, base.port, b"") and target.path.startswith(base.path)

    def key_for(self, url: str) -> str | None:
        """The key of a stored address, or None if the URL is not in this store."""
        url = url.split("#", 1)[0]
        prefix = self.base_url + "/"
        return url[len(prefix):] if url.startswith(prefix) else None


def blob_app(store: BlobStore) -> Starlette:
    """GET /<key> answers the PDF's bytes as application/pdf, or 404 for anything else."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def get(request: Request) -> Response:
        key = request.path_params["key"]
        try:
            path = store.path(key)
        except BlobKeyError:
            return PlainTextResponse("not found", status_code=404)
        if not path.is_file():
            return PlainTextResponse("not found", status_code=404)
        data = path.read_bytes()
        if not data.startswith(PDF_MAGIC):
            return PlainTextResponse("not found", status_code=404)
        return Response(data, media_type="application/pdf")

    return Starlette(routes=[Route("/{key:path}", get)])


@contextmanager
def serve_blob_store(root: Path, *, mount: str = "", prefer_port: int | None = None
                     ) -> Iterator[BlobStore]:
    """A blob store in `root`, served over real HTTP on 127.0.0.1 (under `mount`) while open,
    on `prefer_port` when it is free. Its addresses name the port it is served on."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    sock = bound_socket(prefer=prefer_port)  # held until served: no other run can take it
    port = int(sock.getsockname()[1])
    store = BlobStore(root, f"http://127.0.0.1:{port}{mount}")
    app = Starlette(routes=[Mount(mount, blob_app(store))]) if mount else blob_app(store)
    with serve_in_thread(app, sock=sock):
        yield store
