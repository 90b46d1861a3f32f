"""Curation: staff on a tool's page propose changes to its catalogue record."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import STAFF, ToolError, capability, tool
from app.catalog import SPEC_FIELDS

CURATABLE = (*SPEC_FIELDS, "summary", "location", "aliases")


class ProposeChangeArgs(BaseModel):
    field: str = Field(description=f"One of: {', '.join(CURATABLE)}")
    value: str = Field(min_length=1, max_length=2000, description="The proposed new value")
    reason: str = Field(default="", max_length=2000, description="The source or reason")


class ProposeChangeResult(BaseModel):
    change_id: int
    status: str


@tool(kind="write", args=ProposeChangeArgs, result=ProposeChangeResult)
async def propose_change(ctx: ToolContext, args: ProposeChangeArgs) -> dict[str, Any]:
    """Propose a change to the record of the machine being curated, for review."""
    if ctx.page.machine is None:
        raise ToolError("propose_change works only on a tool page being curated")
    if args.field not in CURATABLE:
        raise ToolError(f"field must be one of {', '.join(CURATABLE)}")
    row = await ctx.db.fetchone(
        "INSERT INTO catalog_changes (machine_id, field, value, reason, proposed_by)"
        " SELECT id, %s, %s, %s, %s FROM machines WHERE slug = %s RETURNING id",
        (args.field, args.value, args.reason,
         ctx.identity.person_id if ctx.identity else None, ctx.page.machine["slug"]),
    )
    assert row is not None
    return {"change_id": row["id"], "status": "pending review"}


@capability(
    "curation", audience=STAFF, tools=[propose_change], order=80,
    when=lambda ctx: ctx.page.curating,
)
def curation_prompt(ctx: PromptContext) -> str:
    machine = ctx.page.machine or {}
    return (
        "## Curating this tool's record (staff)\n"
        f"You are helping staff curate the record of {machine.get('name')}:\n"
        f"{json.dumps(machine, ensure_ascii=False)}\n"
        "Propose each change with propose_change, with its source. Never present a proposed"
        " value as the record's current value."
    )
