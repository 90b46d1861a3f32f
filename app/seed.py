"""The demo seed: the fixture catalogue (two machines), the demo people and one open ticket."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from app.catalog import MachineRecord, UnitRecord, insert_machines
from app.db import Database

FORM_4 = MachineRecord(
    slug="form-4",
    name="Form 4",
    brand="Formlabs",
    category="resin 3D printer",
    summary=(
        "Masked-stereolithography (MSLA) resin printer for smooth, detailed parts: miniatures, "
        "dental and jewellery models, clear or flexible parts. Prints from liquid resin in a "
        "resin tank onto a build platform; parts need washing and curing afterwards."
    ),
    aliases=["Formlabs Form 4", "Form4", "resin printer", "SLA printer"],
    specs={
        "technology": "masked stereolithography (MSLA)",
        "wavelength": "405 nm",
        "materials": "Formlabs resins: Standard, Clear, Tough, Flexible, Elastic",
        "build_volume": None,
        "resolution": None,
    },
    location="Digital fabrication room, bench 2",
    units=[
        UnitRecord(label="Form 4 #1", status="available"),
        UnitRecord(label="Form 4 #2", status="in_use", note="Booked until 16:00"),
    ],
)

TROTEC_SPEEDY_400 = MachineRecord(
    slug="trotec-speedy-400",
    name="Trotec Speedy 400",
    brand="Trotec",
    category="CO2 laser cutter",
    summary=(
        "CO2 laser cutter and engraver for sheet materials: cuts and engraves wood, plywood, "
        "MDF, acrylic, cardboard, paper, leather and textiles; engraves glass and anodised "
        "metal. Never PVC or vinyl (chlorine gas)."
    ),
    aliases=["Trotec", "Speedy 400", "laser cutter", "the laser"],
    specs={
        "technology": "CO2 laser",
        "work_area": "1000 x 610 mm",
        "max_part_height": "305 mm",
        "materials": "wood, plywood, MDF, acrylic, cardboard, paper, leather, textiles",
        "laser_power": None,
    },
    location="Laser room (behind the fire door)",
    units=[UnitRecord(label="Trotec Speedy 400 #1", status="available")],
)

DEMO_MACHINES = [FORM_4, TROTEC_SPEEDY_400]

# (handle, name, role, title)
DEMO_PEOPLE = [
    ("supermaker", "SuperMaker", "staff", "Lab Technician"),
    ("alex", "Alex Kim", "student", ""),
    ("director", "Dr. Priya Nair", "super_admin", "MakerLAB Director"),
]

# (machine slug, title, body)
DEMO_TICKETS = [
    (
        "trotec-speedy-400",
        "Cuts not going through 3 mm plywood",
        "Settings unchanged since last week; lens may need cleaning or refocusing.",
    ),
]

_MACHINE_LIST = TypeAdapter(list[MachineRecord])
try:  # libyaml, when PyYAML was built with it (its wheels are)
    FAST_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - a PyYAML built without libyaml
    FAST_LOADER = yaml.SafeLoader


class CatalogSourceError(ValueError):
    """The configured catalogue source file cannot be read as a list of machines."""


def load_catalog_source(path: Path, *, trusted: bool = False) -> list[MachineRecord]:
    """Machines from the lab's own catalogue file (YAML or JSON: a list of machine records).
    `trusted`: a file of this project's own (the eval fixtures' large lab), read with
    libyaml's parser, about 8 times faster; a lab's file is read with PyYAML's own, whose
    errors on any input are known."""
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.load(text, Loader=FAST_LOADER) if trusted else yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogSourceError(f"CATALOG_SOURCE {path}: {exc}") from exc
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        # not UTF-8, a date or a number PyYAML cannot build, nesting past Python's stack
        raise CatalogSourceError(f"CATALOG_SOURCE {path}: cannot be read"
                                 f" ({type(exc).__name__}: {str(exc)[:200]})") from exc
    try:
        machines = _MACHINE_LIST.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        slug = _slug_at(data, first["loc"])
        raise CatalogSourceError(f"CATALOG_SOURCE {path}: at {where or 'the top'}{slug}:"
                                 f" {first['msg']}") from exc
    # What the database would refuse halfway through seeding (both are unique there).
    if twice := _twice(m.slug for m in machines):
        raise CatalogSourceError(f"CATALOG_SOURCE {path}: slug(s) given twice: {twice}")
    if twice := _twice(u.label for m in machines for u in m.units):
        raise CatalogSourceError(f"CATALOG_SOURCE {path}: unit label(s) given to two units:"
                                 f" {twice}")
    return machines


def _twice(values: Iterable[str]) -> list[str]:
    """The values given more than once, sorted."""
    return sorted(v for v, n in Counter(values).items() if n > 1)


def _slug_at(data: Any, loc: tuple[Any, ...]) -> str:
    """" (machine 'slug')" for the record an error is in, when it has a slug."""
    if loc and isinstance(data, list) and isinstance(loc[0], int) and loc[0] < len(data):
        record = data[loc[0]]
        if isinstance(record, dict) and isinstance(record.get("slug"), str):
            return f" (machine {record['slug']!r})"
    return ""


async def seed_demo(db: Database, machines: list[MachineRecord] | None = None) -> bool:
    """Seed the catalogue, people and demo ticket into an empty database. Returns False if
    the database already holds machines (seeding is never repeated over real data)."""
    existing = await db.fetchone("SELECT count(*) AS n FROM machines")
    if existing and existing["n"]:
        return False
    await insert_machines(db, machines if machines is not None else DEMO_MACHINES)
    async with db.transaction() as conn:
        for handle, name, role, title in DEMO_PEOPLE:
            await conn.execute(
                "INSERT INTO people (handle, name, role, title) VALUES (%s,%s,%s,%s)",
                (handle, name, role, title),
            )
        for slug, title, body in DEMO_TICKETS:
            await conn.execute(
                "INSERT INTO tickets (machine_id, title, body, reporter_name)"
                " SELECT id, %s, %s, 'SuperMaker' FROM machines WHERE slug = %s",
                (title, body, slug),
            )
    return True
