"""Catalogue lookup: find the right machine from a natural request, and its record."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from app import catalog
from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool

RESULTS = 5  # machines a search returns at most
# A catalogue of up to this many machines is listed whole in the prompt; a larger one by
# category, its machines found with the tools. Listing the large lab's 71 helped the embedded
# model find them (3 of its 4 lookups passed, against none with the categories alone).
LISTED = 80


class SearchCatalogArgs(BaseModel):
    query: str = Field(max_length=500,
                       description="What the person wants to do or make, a material, or a"
                                   " machine's name or model")


class ListMachinesArgs(BaseModel):
    category: str | None = Field(default=None, max_length=100,
                                 description="A category from the overview, for its machines;"
                                             " leave out for the overview")


class MachineArgs(BaseModel):
    slug: str = Field(description="The machine's catalogue slug, e.g. form-4")


class MachineRecordOut(BaseModel):
    model_config = ConfigDict(extra="allow")  # the record's other fields, as stored
    slug: str
    name: str


class Category(BaseModel):
    category: str
    machines: int
    names: list[str]


class Nearest(BaseModel):
    slug: str
    name: str
    category: str


# A catalogue record as the tools return it (app.catalog.public), for the examples below.
_TROTEC: dict[str, JsonValue] = {
    "slug": "trotec-speedy-400", "name": "Trotec Speedy 400", "brand": "Trotec",
    "category": "CO2 laser cutter",
    "summary": "CO2 laser cutter and engraver for sheet materials: cuts and engraves wood,"
               " plywood, MDF, acrylic, cardboard, paper, leather and textiles; engraves glass"
               " and anodised metal. Never PVC or vinyl (chlorine gas).",
    "aliases": ["Trotec", "Speedy 400", "laser cutter", "the laser"],
    "location": "Laser room (behind the fire door)", "induction_required": True,
    "specs": {"technology": "CO2 laser", "laser_power": None, "work_area": "1000 x 610 mm",
              "max_part_height": "305 mm",
              "materials": "wood, plywood, MDF, acrylic, cardboard, paper, leather, textiles"},
    "url": "/tools/trotec-speedy-400"}
_FORM_4: dict[str, JsonValue] = {
    "slug": "form-4", "name": "Form 4", "brand": "Formlabs", "category": "resin 3D printer",
    "summary": "Masked-stereolithography (MSLA) resin printer for smooth, detailed parts:"
               " miniatures, dental and jewellery models, clear or flexible parts.",
    "aliases": ["Formlabs Form 4", "Form4", "resin printer", "SLA printer"],
    "location": "Digital fabrication room, bench 2", "induction_required": True,
    "specs": {"technology": "masked stereolithography (MSLA)", "build_volume": None,
              "resolution": None, "wavelength": "405 nm",
              "materials": "Formlabs resins: Standard, Clear, Tough, Flexible, Elastic"},
    "url": "/tools/form-4"}


class SearchCatalogResult(BaseModel):
    # Examples for frozen responses (the evals' workspace offers them); not in the contract.
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"machines": [_TROTEC],
         "note": "1 of the catalogue's 2 machines match 'cut 3 mm acrylic', best first. The"
                 " catalogue lists 2 machines in 2 categories. A machine not in the catalogue"
                 " is not in the lab."},
        {"machines": [],
         "note": "No machine in the catalogue matches 'glowforge'. No catalogue record mentions:"
                 " glowforge. The catalogue lists 2 machines in 2 categories. The machines"
                 " under nearest came closest; they are other machines. Say the lab has none"
                 " for this, unless one of them does the job by its record"
                 " (get_machine_details).",
         "nearest": [{"slug": "trotec-speedy-400", "name": "Trotec Speedy 400",
                      "category": "CO2 laser cutter"}],
         "unknown_words": ["glowforge"]},
    ]})
    machines: list[MachineRecordOut]
    note: str
    # With no match: the machines that came nearest (not what was asked for), and the words
    # of the query that no catalogue record has.
    nearest: list[Nearest] = []
    unknown_words: list[str] = []
    # A query that names nothing: the whole catalogue by category.
    categories: list[Category] = []


class ListMachinesResult(BaseModel):
    machines: int | list[MachineRecordOut]
    categories: list[Category] = []
    category: str | None = None
    note: str


class MachineDetailsResult(MachineRecordOut):
    # Examples for frozen responses (the evals' workspace offers them); not in the contract.
    model_config = ConfigDict(json_schema_extra={"examples": [
        {**_FORM_4, "units": [
            {"label": "Form 4 #1", "status": "available", "note": ""},
            {"label": "Form 4 #2", "status": "in_use", "note": "Booked until 16:00"}]},
        {**_TROTEC, "units": [{"label": "Trotec Speedy 400 #1", "status": "out_of_service",
                               "note": "Lens being replaced; back on Thursday"}]},
    ]})
    units: list[dict[str, Any]] = []


@tool(kind="read", args=SearchCatalogArgs, result=SearchCatalogResult)
async def search_catalog(ctx: ToolContext, args: SearchCatalogArgs) -> dict[str, Any]:
    """Search the lab's machine catalogue by task, material, name or model. Returns the
    matching machines, best first, or says that none matches."""
    embedder = ctx.manuals.embedder if ctx.manuals is not None else None
    found = await catalog.search(ctx.db, embedder, args.query, limit=RESULTS)
    held = await catalog.size(ctx.db)
    whole = f"The catalogue lists {held.machines} machines in {held.categories} categories."
    if found.answer == "overview":
        listed = await catalog.overview(ctx.db)
        return {"machines": [], "categories": listed["categories"], "note": (
            f"{args.query!r} names no task, material or machine, so this is the whole"
            f" catalogue by category. {whole} list_machines gives a category's machines.")}
    if found.answer == "none":
        unknown = (f" No catalogue record mentions: {', '.join(found.unknown)}."
                   if found.unknown else "")
        return {"machines": [], "note": (
            f"No machine in the catalogue matches {args.query!r}.{unknown} {whole} The"
            " machines under nearest came closest; they are other machines. Say the lab has"
            " none for this, unless one of them does the job by its record"
            " (get_machine_details)."),
            "nearest": [{"slug": m["slug"], "name": m["name"], "category": m["category"]}
                        for m in found.nearest],
            "unknown_words": found.unknown}
    return {"machines": found.machines, "note": (
        f"{len(found.machines)} of the catalogue's {held.machines} machines match"
        f" {args.query!r}, best first. {whole} A machine not in the catalogue is not in"
        " the lab.")}


@tool(kind="read", args=ListMachinesArgs, result=ListMachinesResult)
async def list_machines(ctx: ToolContext, args: ListMachinesArgs) -> dict[str, Any]:
    """The lab's whole catalogue by category: how many machines each category has, with their
    names. Give a category to get its machines' records."""
    listed = await catalog.overview(ctx.db, args.category)
    if args.category is None:
        return {**listed, "note": "Every machine the lab has, by category; no other machine"
                                  " is in the lab."}
    if not listed["machines"]:
        known = ", ".join(c["category"] for c in (await catalog.overview(ctx.db))["categories"])
        raise ToolError(f"no category {args.category!r}; the categories are: {known}")
    return {**listed, "note": f"Every machine of the category {args.category!r}."}


@tool(kind="read", args=MachineArgs, result=MachineDetailsResult)
async def get_machine_details(ctx: ToolContext, args: MachineArgs) -> dict[str, Any]:
    """The full catalogue record of one machine: specs (null = not recorded), location, units."""
    machine = await catalog.get_machine(ctx.db, args.slug)
    if machine is None:
        known = ", ".join(m["slug"] for m in await catalog.list_machines(ctx.db))
        raise ToolError(f"no machine with slug {args.slug!r}; catalogue slugs: {known}")
    machine["units"] = await catalog.units_for(ctx.db, args.slug)
    return machine


@capability("catalog", audience=EVERYONE,
            tools=[search_catalog, list_machines, get_machine_details], order=10)
def catalog_prompt(ctx: PromptContext) -> str:
    if len(ctx.catalogue) > LISTED:
        return _large_catalogue(ctx.catalogue)
    lines = [
        f"- {m['name']} ({m['brand']}, {m['category']}) — slug {m['slug']}, page /tools/{m['slug']}"
        for m in ctx.catalogue
    ]
    return (
        "## The lab's catalogue (every machine the lab has)\n"
        + "\n".join(lines)
        + "\nWhen you name a machine, use its catalogue name. Link its page as"
        " [Name](/tools/slug) when useful. Use get_machine_details for specs: a spec that is"
        " null there is not recorded, so say you do not know it."
    )


def _large_catalogue(machines: list[dict[str, Any]]) -> str:
    counts = Counter(m["category"] for m in machines)
    kinds = ", ".join(f"{category} ({n})" for category, n in sorted(counts.items()))
    return (
        f"## The lab's catalogue\nThe lab has {len(machines)} machines in {len(counts)}"
        f" categories: {kinds}.\nOnly catalogue machines are in the lab. Find them with"
        " search_catalog (by task, material, name or model) or list_machines (by category);"
        " never name a machine the tools did not return. When you name a machine, use its"
        " catalogue name; link its page as [Name](/tools/slug) when useful. Use"
        " get_machine_details for specs: a spec that is null there is not recorded, so say you"
        " do not know it."
    )
