"""The demo seed's manuals: the fixture PDFs, ingested at seed time."""

from __future__ import annotations

from app.manuals.library import IngestResult, ManualLibrary
from app.settings import PROJECT_ROOT

FIXTURE_DIR = PROJECT_ROOT / "evals" / "fixtures" / "manuals"
# (file, machine slug, title)
DEMO_MANUALS = [
    ("form-4-manual.pdf", "form-4", "Form 4 Manual"),
    ("trotec-speedy-400-sop.pdf", "trotec-speedy-400", "Trotec Speedy 400 SOP"),
    ("trotec-speedy-400-operator-guide.pdf", "trotec-speedy-400",
     "Trotec Speedy 400 Operator Guide"),
]


async def seed_manuals(library: ManualLibrary) -> list[IngestResult]:
    """Ingest the fixture manuals unless manuals are already there."""
    existing = await library.db.fetchone("SELECT count(*) AS n FROM manuals")
    if existing and existing["n"]:
        return []
    files = [(FIXTURE_DIR / name, slug, title) for name, slug, title in DEMO_MANUALS]
    done, errors = await library.ingest_files(files)
    if errors:
        raise RuntimeError("demo manuals failed to ingest: " + "; ".join(errors))
    return done
