"""`python -m app.manuals ingest FILE.pdf... --machine SLUG --title TITLE`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from app.db import Database, resolve_conninfo
from app.db.roles import APP_ROLE
from app.embed import default_embedder
from app.manuals.blobs import BlobStore
from app.manuals.demo import DemoSeedError, Seeded, seed_database
from app.manuals.library import ManualLibrary
from app.seed import CatalogSourceError
from app.settings import Settings, get_settings


async def _ingest(paths: list[Path], slug: str, title: str | None) -> int:
    settings = get_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    db = Database(resolve_conninfo(url, settings.data_dir), role=APP_ROLE)
    await db.open()
    try:
        library = ManualLibrary(db, BlobStore(settings.blob_root(), settings.blob_base()),
                                default_embedder())
        try:
            # A fresh clone's database is empty until the app has started once.
            seeded = await seed_database(library, settings)
        except (CatalogSourceError, DemoSeedError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        _report_seed(seeded, settings)
        files = [(p, slug, title or p.stem.replace("-", " ").title()) for p in paths]
        done, errors = await library.ingest_files(files)
    finally:
        await db.close()
    for r in done:
        print(f"ingested {r.title}: {r.pages} pages, {r.passages} passages"
              f"{'' if r.has_text else ' (no text layer: attached whole)'} → {r.key}")
        if r.cleaned_pages:
            pages = ", ".join(str(p) for p in r.cleaned_pages)
            print(f"  NUL and other control characters removed from the text of page"
                  f"{'s' if len(r.cleaned_pages) > 1 else ''} {pages}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return 1 if errors else 0


def _report_seed(seeded: Seeded, settings: Settings) -> None:
    if seeded.catalogue:
        source = (f"the catalogue in CATALOG_SOURCE {settings.catalog_source}"
                  if settings.catalog_source else "the demo catalogue")
        print(f"seeded the empty database as the app's start-up does: {source}")
    if seeded.manuals:
        print("seeded the demo manuals: " + ", ".join(r.title for r in seeded.manuals))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.manuals")
    sub = parser.add_subparsers(dest="command", required=True)
    ingest = sub.add_parser(
        "ingest", help="add PDF manuals to a machine (an empty database is seeded first,"
                       " as the app's start-up does)")
    ingest.add_argument("pdf", nargs="+", type=Path)
    ingest.add_argument("--machine", required=True, help="the machine's catalogue slug")
    ingest.add_argument("--title", help="document title (default: from the file name)")
    args = parser.parse_args(argv)
    if len(args.pdf) > 1 and args.title:
        parser.error("--title names one document; give one PDF with it")
    return asyncio.run(_ingest(args.pdf, args.machine, args.title))


if __name__ == "__main__":
    raise SystemExit(main())
