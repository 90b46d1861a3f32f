"""The blob store: PDFs by key, served over real HTTP, and only its own addresses."""

import httpx
import pytest

from app.manuals.blobs import BlobKeyError, BlobStore

PDF = b"%PDF-1.4\n% fixture\n"
BASE = "http://127.0.0.1:9/manuals"


async def _get(base, path):
    async with httpx.AsyncClient() as client:
        return await client.get(base + path)


async def test_a_stored_pdf_is_served_as_application_pdf(blob_server):
    store, base = blob_server
    store.put("manuals/a.pdf", PDF)
    r = await _get(base, "/manuals/a.pdf")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/pdf"
    assert r.content.startswith(b"%PDF-")
    assert store.address("manuals/a.pdf") == f"{base}/manuals/a.pdf"


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.pdf",
        "/%2e%2e/secret.pdf",
        "/..%2fsecret.pdf",
        "/manuals/..%2F..%2Fsecret.pdf",
        "/%2e%2e%2f%2e%2e%2fsecret.pdf",
        "//etc/passwd",
        "/manuals/missing.pdf",
        "/notes.txt",
        "/fake.pdf",
    ],
)
async def test_anything_else_is_404_and_nothing_outside_the_store_is_served(blob_server, path):
    store, base = blob_server
    (store.root.parent / "secret.pdf").write_bytes(PDF + b"SECRET")
    (store.root / "notes.txt").write_text("hello")
    (store.root / "fake.pdf").write_bytes(b"<html>not a pdf</html>")
    r = await _get(base, path)
    assert r.status_code == 404
    assert b"SECRET" not in r.content


@pytest.mark.parametrize("key", ["../x.pdf", "/abs.pdf", "a/../../x.pdf", "x.txt", "a//b.pdf"])
def test_keys_that_could_leave_the_store_are_refused(blob_server, key):
    store, _ = blob_server
    with pytest.raises(BlobKeyError):
        store.path(key)


def test_only_pdfs_are_stored(blob_server):
    with pytest.raises(BlobKeyError, match="only PDFs"):
        blob_server[0].put("x.pdf", b"GIF89a")


@pytest.mark.parametrize(("url", "served"), [
    (f"{BASE}/form-4/form-4-manual.pdf", True),
    (f"{BASE}/form-4/form-4-manual.pdf#page=2", True),
    ("http://127.0.0.1:9/manuals/../admin.pdf", False),  # resolves outside the store
    ("http://127.0.0.1:9/manuals/%2e%2e/admin.pdf", False),  # the server may decode it
    ("http://127.0.0.1:9/manuals/x%2Fy.pdf", False),
    ("http://127.0.0.1:9/other.pdf", False),
    ("http://127.0.0.1:8000/manuals/x.pdf", False),  # another port of the same host
    ("http://localhost:9/manuals/x.pdf", False),
    ("http://user@127.0.0.1:9/manuals/x.pdf", False),
    ("https://127.0.0.1:9/manuals/x.pdf", False),
    ("http://169.254.169.254/latest/meta-data.pdf", False),
    ("http://[::1", False),
])
def test_the_store_serves_only_its_own_addresses(tmp_path, url, served):
    assert BlobStore(tmp_path, BASE).serves(url) is served
