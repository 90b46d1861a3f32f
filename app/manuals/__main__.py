"""`python -m app.manuals ingest FILE.pdf... --machine SLUG --title TITLE`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from app.db import Database, resolve_conninfo
from app.manuals.blobs import BlobStore
from app.manuals.embed import default_embedder
from app.manuals.library import ManualLibrary
from app.settings import get_settings


async def _ingest(paths: list[Path], slug: str, title: str | None) -> int:
    settings = get_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    db = Database(resolve_conninfo(url, settings.data_dir))
    await db.open()
    try:
        library = ManualLibrary(db, BlobStore(settings.blob_root(), settings.blob_base()),
                                default_embedder())
        files = [(p, slug, title or p.stem.replace("-", " ").title()) for p in paths]
        done, errors = await library.ingest_files(files)
    finally:
        await db.close()
    for r in done:
        print(f"ingested {r.title}: {r.pages} pages, {r.passages} passages"
              f"{'' if r.has_text else ' (no text layer: attached whole)'} → {r.key}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.manuals")
    sub = parser.add_subparsers(dest="command", required=True)
    ingest = sub.add_parser("ingest", help="add PDF manuals to a machine")
    ingest.add_argument("pdf", nargs="+", type=Path)
    ingest.add_argument("--machine", required=True, help="the machine's catalogue slug")
    ingest.add_argument("--title", help="document title (default: from the file name)")
    args = parser.parse_args(argv)
    if len(args.pdf) > 1 and args.title:
        parser.error("--title names one document; give one PDF with it")
    return asyncio.run(_ingest(args.pdf, args.machine, args.title))


if __name__ == "__main__":
    raise SystemExit(main())
