"""Action tools only propose: a pending card a person confirms before anything changes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from app.capabilities._context import PageContext, ToolContext
from app.capabilities._registry import REGISTRY, ApplyFn, Tool, ToolError
from app.db import Database
from app.identity import Identity, audience_of
from app.text import storable

CheckFn = Callable[[ToolContext, Any], Awaitable[str]]


class ProposalResult(BaseModel):
    proposed: bool
    proposal_id: str
    summary: str
    note: str


def propose(
    *, name: str, args: type[BaseModel], description: str, check: CheckFn, apply: ApplyFn
) -> Tool:
    """An action tool: `check` validates and describes the change; `apply` runs on Confirm."""

    async def run(ctx: ToolContext, parsed: BaseModel) -> dict[str, Any]:
        summary = await check(ctx, parsed)
        proposal_id = ctx.new_id() if ctx.new_id is not None else str(uuid.uuid4())
        await ctx.db.execute(
            "INSERT INTO proposals (id, tool, arguments, summary, proposed_for)"
            " VALUES (%s,%s,%s,%s,%s)",
            (proposal_id, name, json.dumps(storable(parsed.model_dump(mode="json"))),
             storable(summary),
             ctx.identity.person_id if ctx.identity else None),
        )
        return {
            "proposed": True,
            "proposal_id": proposal_id,
            "summary": summary,
            "note": "A confirmation card is shown to the person. Nothing has changed yet.",
        }

    return Tool(name=name, description=description, args=args, kind="action", run=run, apply=apply,
                result=ProposalResult)


class ProposalError(Exception):
    """A proposal that cannot be confirmed: missing, already decided, or not this person's."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


async def decide_proposal(
    db: Database, settings: Any, identity: Identity | None, proposal_id: str, *, confirm: bool
) -> dict[str, Any]:
    """Apply (confirm) or reject a pending proposal, as the person it was proposed to."""
    try:
        uuid.UUID(proposal_id)
    except ValueError:
        raise ProposalError(f"no proposal {proposal_id!r}", 404) from None
    row = await db.fetchone("SELECT * FROM proposals WHERE id = %s", (proposal_id,))
    # Someone else's proposal is answered like one that does not exist: ids cannot be probed.
    if row is None or identity is None or row["proposed_for"] != identity.person_id:
        raise ProposalError(f"no proposal {proposal_id!r}", 404)
    if row["status"] != "pending":
        raise ProposalError(f"proposal {proposal_id} is already {row['status']}", 409)
    tool = REGISTRY.tool(row["tool"])
    owner = next(c for c in REGISTRY.ordered() if tool in c.tools)
    # The role decides on the server: a person who lost the role cannot confirm.
    if audience_of(identity) not in owner.audience:
        raise ProposalError(f"your role may not use {tool.name}", 403)
    decided = "applied" if confirm else "rejected"
    # Claim the proposal atomically, so two Confirm presses cannot both apply it.
    claimed = await db.fetchone(
        "UPDATE proposals SET status = %s, decided_at = now()"
        " WHERE id = %s AND status = 'pending' RETURNING arguments",
        (decided, proposal_id),
    )
    if claimed is None:
        raise ProposalError(f"proposal {proposal_id} was already decided", 409)
    if not confirm:
        return {"proposal_id": proposal_id, "status": "rejected"}
    args = tool.args.model_validate(claimed["arguments"])
    ctx = ToolContext(db=db, settings=settings, identity=identity, page=PageContext())
    try:
        result = await tool.apply(ctx, args)  # type: ignore[misc]
    except ToolError as exc:
        await db.execute(
            "UPDATE proposals SET status = 'pending', decided_at = NULL WHERE id = %s",
            (proposal_id,),
        )
        raise ProposalError(str(exc), 409) from exc
    return {"proposal_id": proposal_id, "status": "applied", "result": result}
