"""The fixture data a request may carry beyond what an item says, record by record: the manuals
served to the model, the catalogue records, the tickets and the people the eval's database
holds. The plan keeps each one's digest (`PlanInfo.inputs`, not in the fingerprint: the files
they come from are its fixtures), so impact can say which record changed, not only which file.

A record's key names it: "manual/<slug>/<file>", "catalogue/<phase>/<slug>" (the first
catalogue that has the machine, whose record the database serves from then on), "ticket/<id>"
(ids in the order the template database inserts them), "person/<handle>".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from app.manuals import demo as manuals
from app.seed import DEMO_PEOPLE, DEMO_TICKETS
from evals.fixtures.lab_catalog import CATALOGS, Catalog, catalog_machines
from evals.fixtures.tickets import EVAL_TICKETS
from evals.record.fingerprint import digest

SEED = "app/seed.py"
# Where each kind of record is written, for a baseline that kept only the files' hashes.
_CATALOGUE_FILES = {"demo": SEED, "lab": "evals/fixtures/catalogs/large-lab.yaml",
                    "large": "evals/fixtures/catalogs/large-lab.yaml"}
_MANUALS = "evals/fixtures/manuals"


def tickets() -> list[tuple[str, str, str]]:
    """Every ticket of the eval's database, in id order (from 1): (machine slug, title, body)."""
    return [*DEMO_TICKETS, *EVAL_TICKETS]


def served_machines(catalog: Catalog) -> dict[str, tuple[Catalog, dict[str, object]]]:
    """The catalogue records an item of `catalog` is served, by slug: the phase whose record
    the database holds (an earlier phase's, seeded first) and the record."""
    out: dict[str, tuple[Catalog, dict[str, object]]] = {}
    for phase in CATALOGS[:CATALOGS.index(catalog) + 1]:
        for machine in catalog_machines(phase):
            out.setdefault(machine.slug, (phase, machine.model_dump(mode="json")))
    return out


def data_digests(catalogs: Iterable[Catalog]) -> dict[str, str]:
    """The digest of every record the eval's database serves the items of these catalogues
    (the demo's machines, tickets, people and manuals whatever they are), by key."""
    out: dict[str, str] = {}
    for file, slug, title in manuals.DEMO_MANUALS:
        data = (manuals.FIXTURE_DIR / file).read_bytes()
        out[f"manual/{slug}/{file}"] = digest([hashlib.sha256(data).hexdigest(), title])
    last = max((CATALOGS.index(c) for c in catalogs), default=0)
    for slug, (phase, record) in served_machines(CATALOGS[last]).items():
        out[f"catalogue/{phase}/{slug}"] = digest(record)
    for n, ticket in enumerate(tickets(), 1):
        out[f"ticket/{n}"] = digest(list(ticket))
    for n, (handle, *rest) in enumerate(DEMO_PEOPLE, 1):  # a sign-in is its role's first
        out[f"person/{handle}"] = digest([n, handle, *rest])
    return out


def sources(key: str) -> tuple[str, ...]:
    """The fixture files (as the plan names them) a record of this key is written in."""
    kind, _, rest = key.partition("/")
    if kind == "manual":
        return (f"{_MANUALS}/{rest.partition('/')[2]}", "app/manuals/demo.py")
    if kind == "catalogue":
        return (_CATALOGUE_FILES.get(rest.partition("/")[0], SEED),)
    if kind == "ticket":
        return (SEED if int(rest) <= len(DEMO_TICKETS) else "evals/fixtures/tickets.py",)
    return (SEED,)
