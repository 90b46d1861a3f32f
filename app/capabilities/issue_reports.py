"""Problem reports: anyone can file one; anonymous reports are allowed."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool


class ReportIssueArgs(BaseModel):
    slug: str = Field(description="Catalogue slug of the machine with the problem")
    title: str = Field(min_length=3, max_length=120, description="One-line summary")
    description: str = Field(default="", max_length=4000, description="What happened")
    reporter_name: str | None = Field(
        default=None, max_length=120,
        description="The reporter's name if they gave one; omit for an anonymous report",
    )


class ReportIssueResult(BaseModel):
    ticket_id: int
    machine: str
    filed: bool
    anonymous: bool


@tool(kind="write", args=ReportIssueArgs, result=ReportIssueResult)
async def report_issue(ctx: ToolContext, args: ReportIssueArgs) -> dict[str, Any]:
    """File a problem report (maintenance ticket) about a machine."""
    machine = await ctx.db.fetchone("SELECT id, name FROM machines WHERE slug = %s", (args.slug,))
    if machine is None:
        raise ToolError(f"no machine with slug {args.slug!r}")
    reporter_id = ctx.identity.person_id if ctx.identity else None
    name = ctx.identity.name if ctx.identity else args.reporter_name
    row = await ctx.db.fetchone(
        "INSERT INTO tickets (machine_id, title, body, reporter_id, reporter_name)"
        " VALUES (%s,%s,%s,%s,%s) RETURNING id",
        (machine["id"], args.title, args.description, reporter_id, name),
    )
    assert row is not None
    return {"ticket_id": row["id"], "machine": machine["name"], "filed": True,
            "anonymous": name is None}


@capability("issue_reports", audience=EVERYONE, tools=[report_issue], order=40)
def issue_reports_prompt(ctx: PromptContext) -> str:
    if ctx.identity:
        who = f"The report is filed under {ctx.identity.name}'s name automatically."
    else:
        who = (
            "Nobody is signed in. Before filing, ask once for the reporter's name so staff can"
            " follow up. If they decline or do not want to give it, file the report anyway"
            " without a name: an anonymous report beats no report."
        )
    return (
        "## Problem reports\n"
        "When someone describes a broken or misbehaving machine, offer to file a report and,"
        " once you have what is needed (which machine, what happened), call report_issue."
        f" {who} Only say a report was filed after report_issue returned filed: true."
    )
