"""Catalogue lookup: find the right machine from a natural request, and its record."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app import catalog
from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool


class SearchCatalogArgs(BaseModel):
    query: str = Field(description="What the person wants to do or make, or a machine name")


class MachineArgs(BaseModel):
    slug: str = Field(description="The machine's catalogue slug, e.g. form-4")


class MachineRecordOut(BaseModel):
    model_config = ConfigDict(extra="allow")  # the record's other fields, as stored
    slug: str
    name: str


class SearchCatalogResult(BaseModel):
    machines: list[MachineRecordOut]
    note: str


class MachineDetailsResult(MachineRecordOut):
    units: list[dict[str, Any]] = []


@tool(kind="read", args=SearchCatalogArgs, result=SearchCatalogResult)
async def search_catalog(ctx: ToolContext, args: SearchCatalogArgs) -> dict[str, Any]:
    """Search the lab's machine catalogue by task, material or name. Returns matching machines."""
    found = await catalog.search_machines(ctx.db, args.query)
    return {"machines": found, "note": "Only these catalogue machines exist in the lab."}


@tool(kind="read", args=MachineArgs, result=MachineDetailsResult)
async def get_machine_details(ctx: ToolContext, args: MachineArgs) -> dict[str, Any]:
    """The full catalogue record of one machine: specs (null = not recorded), location, units."""
    machine = await catalog.get_machine(ctx.db, args.slug)
    if machine is None:
        known = ", ".join(m["slug"] for m in await catalog.list_machines(ctx.db))
        raise ToolError(f"no machine with slug {args.slug!r}; catalogue slugs: {known}")
    machine["units"] = await catalog.units_for(ctx.db, args.slug)
    return machine


@capability("catalog", audience=EVERYONE, tools=[search_catalog, get_machine_details], order=10)
def catalog_prompt(ctx: PromptContext) -> str:
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
