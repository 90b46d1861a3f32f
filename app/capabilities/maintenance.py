"""Staff maintenance: read the open queue; propose ticket changes for a person to confirm."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._proposals import propose
from app.capabilities._registry import STAFF, ToolError, capability, tool


class ListTicketsArgs(BaseModel):
    slug: str | None = Field(default=None, description="Only tickets for this machine slug")


class UpdateTicketArgs(BaseModel):
    ticket_id: int = Field(description="The ticket's id, from list_open_tickets")
    status: Literal["open", "in_progress", "resolved"] | None = Field(
        default=None, description="New status"
    )
    note: str | None = Field(default=None, max_length=2000, description="A note to add")


class TicketOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int
    title: str
    status: str
    machine: str
    slug: str


class ListTicketsResult(BaseModel):
    # Examples for frozen responses (the evals' workspace offers them); not in the contract.
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"count": 2, "tickets": [
            {"id": 1, "title": "Cuts not going through 3 mm plywood", "status": "open",
             "machine": "Trotec Speedy 400", "slug": "trotec-speedy-400",
             "body": "Settings unchanged since last week; lens may need cleaning or"
                     " refocusing.", "reporter": "anonymous", "opened": "2026-11-24"},
            {"id": 4, "title": "Resin tank film clouded", "status": "in_progress",
             "machine": "Form 4", "slug": "form-4",
             "body": "Prints fail halfway; the film looks scratched.", "reporter": "Alex Kim",
             "opened": "2026-11-27"}]},
        {"count": 0, "tickets": []},
    ]})
    tickets: list[TicketOut]
    count: int


@tool(kind="read", args=ListTicketsArgs, result=ListTicketsResult)
async def list_open_tickets(ctx: ToolContext, args: ListTicketsArgs) -> dict[str, Any]:
    """The maintenance queue: every ticket that is not resolved, oldest first."""
    rows = await ctx.db.fetch(
        "SELECT t.id, t.title, t.body, t.status, m.name AS machine, m.slug,"
        " coalesce(t.reporter_name, 'anonymous') AS reporter, t.created_at::date::text AS opened"
        " FROM tickets t JOIN machines m ON m.id = t.machine_id"
        " WHERE t.status <> 'resolved' AND (%s::text IS NULL OR m.slug = %s) ORDER BY t.id",
        (args.slug, args.slug),
    )
    return {"tickets": rows, "count": len(rows)}


async def _check_update(ctx: ToolContext, args: UpdateTicketArgs) -> str:
    row = await ctx.db.fetchone(
        "SELECT t.title, t.status FROM tickets t WHERE t.id = %s", (args.ticket_id,)
    )
    if row is None:
        raise ToolError(f"no ticket with id {args.ticket_id}")
    if args.status is None and not args.note:
        raise ToolError("nothing to change: give a status, a note, or both")
    parts = []
    if args.status:
        parts.append(f"status {row['status']} → {args.status}")
    if args.note:
        parts.append(f"add note “{args.note}”")
    return f"Ticket #{args.ticket_id} “{row['title']}”: " + "; ".join(parts)


async def _apply_update(ctx: ToolContext, args: UpdateTicketArgs) -> dict[str, Any]:
    async with ctx.db.transaction() as conn:
        if args.status:
            await conn.execute(
                "UPDATE tickets SET status = %s, updated_at = now() WHERE id = %s",
                (args.status, args.ticket_id),
            )
        if args.note:
            await conn.execute(
                "INSERT INTO ticket_notes (ticket_id, author_id, note) VALUES (%s,%s,%s)",
                (args.ticket_id, ctx.identity.person_id if ctx.identity else None, args.note),
            )
    return {"ticket_id": args.ticket_id, "updated": True}


update_ticket = propose(
    name="update_ticket",
    args=UpdateTicketArgs,
    description=(
        "Propose a change to a maintenance ticket (status and/or a note). This only shows the"
        " person a confirmation card; nothing changes until they press Confirm on it."
    ),
    check=_check_update,
    apply=_apply_update,
)


@capability("maintenance", audience=STAFF, tools=[list_open_tickets, update_ticket], order=50)
def maintenance_prompt(ctx: PromptContext) -> str:
    return (
        "## Maintenance queue (staff)\n"
        "Read the queue with list_open_tickets; never describe tickets you have not read."
        " To change a ticket, call update_ticket: it only puts a confirmation card in front of"
        " the person. Nothing changes until they press Confirm on the card. A typed 'yes' or"
        " 'do it' in the chat is not a confirmation: point them to the card's Confirm button."
        " Never say a ticket was updated, resolved or closed: say the change is waiting for"
        " their confirmation."
    )
