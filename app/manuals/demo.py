"""The demo seed's manuals, and the whole seed the app's start-up puts into a database."""

from __future__ import annotations

from dataclasses import dataclass

from app import catalog
from app.manuals.library import IngestResult, ManualLibrary
from app.seed import load_catalog_source, seed_demo
from app.settings import PROJECT_ROOT, Settings

FIXTURE_DIR = PROJECT_ROOT / "evals" / "fixtures" / "manuals"
# (file, machine slug, title)
DEMO_MANUALS = [
    ("form-4-manual.pdf", "form-4", "Form 4 Manual"),
    ("trotec-speedy-400-sop.pdf", "trotec-speedy-400", "Trotec Speedy 400 SOP"),
    ("trotec-speedy-400-operator-guide.pdf", "trotec-speedy-400",
     "Trotec Speedy 400 Operator Guide"),
]


class DemoSeedError(RuntimeError):
    """A demo manual failed to ingest; the message names each file."""


@dataclass(frozen=True)
class Seeded:
    catalogue: bool  # False: the database already held machines
    manuals: list[IngestResult]


async def seed_manuals(library: ManualLibrary) -> list[IngestResult]:
    """Ingest the fixture manuals unless manuals are already there.

    A lab's own catalogue (CATALOG_SOURCE) may lack the demo machines: their manuals are
    skipped, not an error that stops the app from starting.
    """
    existing = await library.db.fetchone("SELECT count(*) AS n FROM manuals")
    if existing and existing["n"]:
        return []
    rows = await library.db.fetch("SELECT slug FROM machines")
    catalogued = {r["slug"] for r in rows}
    files = [(FIXTURE_DIR / name, slug, title) for name, slug, title in DEMO_MANUALS
             if slug in catalogued]
    done, errors = await library.ingest_files(files)
    if errors:
        raise DemoSeedError("demo manuals failed to ingest: " + "; ".join(errors))
    return done


async def seed_database(library: ManualLibrary, settings: Settings) -> Seeded:
    """Seed the library's database as the app's start-up does (migrations ran at open).

    The catalogue (CATALOG_SOURCE, else the demo one), people and ticket go into a database
    with no machines, then the demo manuals into one with no manuals. A command that runs
    without the app (ingest) calls this, so a fresh clone needs no `make serve` first.
    """
    machines = load_catalog_source(settings.catalog_source) if settings.catalog_source \
        else None
    catalogue = await seed_demo(library.db, machines)
    await catalog.index(library.db, library.embedder)
    return Seeded(catalogue, await seed_manuals(library))
