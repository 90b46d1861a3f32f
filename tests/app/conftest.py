from collections.abc import Iterator

import pytest

from app.manuals import BlobStore, ManualLibrary, blob_app
from app.manuals.demo import seed_manuals
from app.manuals.embed import HashEmbedder
from app.web.background import serve_in_thread


@pytest.fixture
def blob_server(tmp_path) -> Iterator[tuple[BlobStore, str]]:
    """A blob store in a temp folder, served over real HTTP on 127.0.0.1."""
    root = tmp_path / "blobs"
    root.mkdir()
    holder: dict[str, BlobStore] = {}

    class Lazy:  # the store's base URL is known only once the server has a port
        async def __call__(self, scope, receive, send):
            await holder["app"](scope, receive, send)

    with serve_in_thread(Lazy()) as base:
        store = BlobStore(root, base)
        holder["app"] = blob_app(store)
        yield store, base


@pytest.fixture
async def library(db, blob_server) -> ManualLibrary:
    lib = ManualLibrary(db, blob_server[0], HashEmbedder())
    await seed_manuals(lib)
    return lib
