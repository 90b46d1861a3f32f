"""Manuals: the blob store, page texts, embedded passages, search and citations."""

from app.manuals.blobs import BlobStore, blob_app
from app.manuals.library import IngestError, IngestResult, ManualLibrary

__all__ = ["BlobStore", "IngestError", "IngestResult", "ManualLibrary", "blob_app"]
