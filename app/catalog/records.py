"""The catalogue: machines, their spec fields and physical units."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from app.db import Database
from app.text import CONTROL, UNSTORABLE, found_in

# Spec fields a machine record may carry. A field with no value is unknown: the assistant must
# say so rather than produce a plausible figure (the evals' no_fabricated_specs checks this).
SPEC_FIELDS: tuple[str, ...] = (
    "technology",
    "build_volume",
    "resolution",
    "laser_power",
    "work_area",
    "max_part_height",
    "wavelength",
    "materials",
)


UnitStatus = Literal["available", "in_use", "out_of_service"]  # as the units table allows


def _fit_text(value: Any) -> None:
    """Refuse text the database cannot hold (a lone surrogate) or no one writes (a control
    character, NUL included), naming where it is."""
    if hit := found_in(value, CONTROL, UNSTORABLE):
        where, char = hit
        raise ValueError(f"{'.'.join(map(str, where)) or 'a value'} holds the character"
                         f" U+{ord(char):04X}")


class UnitRecord(BaseModel):
    label: str = Field(min_length=1)
    status: UnitStatus = "available"
    note: str = ""


class MachineRecord(BaseModel):
    """One catalogue machine as seeded or loaded from the lab's catalogue source."""

    slug: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    name: str
    brand: str
    category: str
    summary: str = ""
    aliases: list[str] = []
    specs: dict[str, str | None] = {}
    location: str = ""
    induction_required: bool = True
    units: list[UnitRecord] = []

    @field_validator("specs")
    @classmethod
    def _known_fields(cls, specs: dict[str, str | None]) -> dict[str, str | None]:
        unknown = sorted(set(specs) - set(SPEC_FIELDS))
        if unknown:
            raise ValueError(f"unknown spec field(s) {unknown}; known: {list(SPEC_FIELDS)}")
        return specs

    @model_validator(mode="after")
    def _storable(self) -> MachineRecord:
        _fit_text(self.model_dump())
        labels = [u.label for u in self.units]
        if len(set(labels)) != len(labels):
            raise ValueError(f"a unit label is given twice: {labels}")
        return self


async def insert_machines(db: Database, machines: list[MachineRecord]) -> None:
    """Insert machines and their units (used by the seeds)."""
    async with db.transaction() as conn:
        for m in machines:
            cur = await conn.execute(
                "INSERT INTO machines (slug, name, brand, category, summary, aliases, specs,"
                " location, induction_required) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                (m.slug, m.name, m.brand, m.category, m.summary, m.aliases,
                 json.dumps(m.specs), m.location, m.induction_required),
            )
            row = await cur.fetchone()
            assert row is not None
            for u in m.units:
                await conn.execute(
                    "INSERT INTO units (machine_id, label, status, note) VALUES (%s,%s,%s,%s)",
                    (row["id"], u.label, u.status, u.note),
                )


def public(row: dict[str, Any]) -> dict[str, Any]:
    specs = dict(row["specs"])
    return {
        "slug": row["slug"],
        "name": row["name"],
        "brand": row["brand"],
        "category": row["category"],
        "summary": row["summary"],
        "aliases": list(row["aliases"]),
        "location": row["location"],
        "induction_required": row["induction_required"],
        # Every known field is listed; None means "not recorded".
        "specs": {f: specs.get(f) for f in SPEC_FIELDS if f in specs},
        "url": f"/tools/{row['slug']}",
    }


async def list_machines(db: Database) -> list[dict[str, Any]]:
    rows = await db.fetch("SELECT * FROM machines ORDER BY name")
    return [public(r) for r in rows]


async def get_machine(db: Database, slug: str) -> dict[str, Any] | None:
    row = await db.fetchone("SELECT * FROM machines WHERE slug = %s", (slug,))
    return public(row) if row else None


async def units_for(db: Database, slug: str) -> list[dict[str, Any]]:
    return await db.fetch(
        "SELECT u.label, u.status, u.note FROM units u JOIN machines m ON m.id = u.machine_id"
        " WHERE m.slug = %s ORDER BY u.label",
        (slug,),
    )
