"""Unit status: which physical units of a machine are free, in use or out of service."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app import catalog
from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool


class UnitStatusArgs(BaseModel):
    slug: str = Field(description="The machine's catalogue slug")


class UnitStatusResult(BaseModel):
    slug: str
    units: list[dict[str, Any]]
    open_reports: list[dict[str, Any]]


@tool(kind="read", args=UnitStatusArgs, result=UnitStatusResult)
async def get_unit_status(ctx: ToolContext, args: UnitStatusArgs) -> dict[str, Any]:
    """Current status of each physical unit of a machine, and its open problem reports."""
    if await catalog.get_machine(ctx.db, args.slug) is None:
        raise ToolError(f"no machine with slug {args.slug!r}")
    units = await catalog.units_for(ctx.db, args.slug)
    open_tickets = await ctx.db.fetch(
        "SELECT t.title, t.status FROM tickets t JOIN machines m ON m.id = t.machine_id"
        " WHERE m.slug = %s AND t.status <> 'resolved' ORDER BY t.id",
        (args.slug,),
    )
    return {"slug": args.slug, "units": units, "open_reports": open_tickets}


@capability("units", audience=EVERYONE, tools=[get_unit_status], order=20)
def units_prompt(ctx: PromptContext) -> str:
    return (
        "Whether a machine is free, busy or broken right now is only known from"
        " get_unit_status: call it before answering any question about availability."
    )
