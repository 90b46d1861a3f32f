"""Photos: identify catalogue machines in a photo; staff record bench items into inventory."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, STAFF, ToolError, capability, tool


class IdentifiedItem(BaseModel):
    brand: str = Field(default="", max_length=80)
    name: str = Field(min_length=1, max_length=120)
    quantity: int = Field(default=1, ge=1, le=1000)


class IdentifyToolsArgs(BaseModel):
    attachment_id: str = Field(description="The photo's attachment_id from the message hint")
    items: list[IdentifiedItem] = Field(min_length=1, description="One entry per distinct item")


class IdentifyToolsResult(BaseModel):
    recorded: int


@tool(kind="write", args=IdentifyToolsArgs, result=IdentifyToolsResult)
async def identify_tools(ctx: ToolContext, args: IdentifyToolsArgs) -> dict[str, Any]:
    """Record the items identified in a photo into the lab's inventory intake (brand, name,
    quantity), one entry per distinct item."""
    if args.attachment_id not in {p.attachment_id for p in ctx.photos}:
        raise ToolError(f"no photo with attachment_id {args.attachment_id!r} in this message")
    person = ctx.identity.person_id if ctx.identity else None
    async with ctx.db.transaction() as conn:
        for item in args.items:
            await conn.execute(
                "INSERT INTO intake_items (attachment_id, brand, name, quantity, recorded_by)"
                " VALUES (%s,%s,%s,%s,%s)",
                (args.attachment_id, item.brand, item.name, item.quantity, person),
            )
    return {"recorded": len(args.items)}


@capability("photo_identify", audience=EVERYONE, order=60)
def photo_identify_prompt(ctx: PromptContext) -> str:
    return (
        "## Photos\n"
        "A message may carry photos, listed in an [Attached photos: ...] hint. To say which"
        " machine is pictured, compare what you see with the catalogue: name the catalogue"
        " machine only when you are sure. When look-alikes leave it open, say you cannot tell"
        " and name the candidates, or ask a question that would settle it. If the pictured"
        " machine is not in the catalogue, say the lab does not have it."
    )


@capability("inventory_intake", audience=STAFF, tools=[identify_tools], order=61)
def inventory_intake_prompt(ctx: PromptContext) -> str:
    return (
        "Staff may ask to add what is in a photo to the inventory: call identify_tools once"
        " per photo with one item per distinct thing (brand, name, quantity)."
    )
