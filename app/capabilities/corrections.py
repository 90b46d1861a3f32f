"""Corrections: anyone can tell the lab that a catalogue record is wrong."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool
from app.catalog import SPEC_FIELDS


class ReportCorrectionArgs(BaseModel):
    slug: str = Field(description="Catalogue slug of the machine")
    field: str = Field(description="What is wrong: a spec field name, or 'other'")
    claim: str = Field(min_length=3, max_length=2000, description="What the person says is right")


class ReportCorrectionResult(BaseModel):
    recorded: bool
    note: str


@tool(kind="write", args=ReportCorrectionArgs, result=ReportCorrectionResult)
async def report_correction(ctx: ToolContext, args: ReportCorrectionArgs) -> dict[str, Any]:
    """Record that a catalogue record may be wrong, for staff to review. Changes nothing."""
    if args.field not in (*SPEC_FIELDS, "other"):
        raise ToolError(f"field must be one of {', '.join(SPEC_FIELDS)} or 'other'")
    row = await ctx.db.fetchone("SELECT id FROM machines WHERE slug = %s", (args.slug,))
    if row is None:
        raise ToolError(f"no machine with slug {args.slug!r}")
    await ctx.db.execute(
        "INSERT INTO corrections (machine_id, field, claim, reporter_id) VALUES (%s,%s,%s,%s)",
        (row["id"], args.field, args.claim, ctx.identity.person_id if ctx.identity else None),
    )
    return {"recorded": True, "note": "Staff will review it; the record is unchanged."}


@capability("corrections", audience=EVERYONE, tools=[report_correction], order=70)
def corrections_prompt(ctx: PromptContext) -> str:
    return (
        "If someone says a machine's record is wrong, do not change your answer to their"
        " figure: record it with report_correction for staff to review, and say so."
    )
