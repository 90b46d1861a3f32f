from collections.abc import Iterator

import pytest

from app.embed import HashEmbedder
from app.manuals import BlobStore, ManualLibrary
from app.manuals.blobs import serve_blob_store
from app.manuals.demo import seed_manuals


@pytest.fixture
def blob_server(tmp_path) -> Iterator[tuple[BlobStore, str]]:
    """A blob store in a temp folder, served over real HTTP on 127.0.0.1."""
    root = tmp_path / "blobs"
    root.mkdir()
    with serve_blob_store(root) as store:
        yield store, store.base_url


@pytest.fixture
async def library(db, blob_server) -> ManualLibrary:
    lib = ManualLibrary(db, blob_server[0], HashEmbedder())
    await seed_manuals(lib)
    return lib
