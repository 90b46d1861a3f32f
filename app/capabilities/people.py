"""People and titles: the director can propose a person's title, confirmed on a card."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._proposals import propose
from app.capabilities._registry import SUPER_ADMIN, ToolError, capability


class SetTitleArgs(BaseModel):
    person: str = Field(description="The person's name or handle")
    title: str = Field(max_length=120, description="The new title ('' to clear it)")


async def _find(ctx: ToolContext, person: str) -> dict[str, Any]:
    row = await ctx.db.fetchone(
        "SELECT id, name, title FROM people WHERE lower(name) = lower(%s) OR handle = lower(%s)",
        (person, person),
    )
    if row is None:
        raise ToolError(f"no person named {person!r}")
    return row


async def _check(ctx: ToolContext, args: SetTitleArgs) -> str:
    row = await _find(ctx, args.person)
    return f"{row['name']}: title “{row['title']}” → “{args.title}”"


async def _apply(ctx: ToolContext, args: SetTitleArgs) -> dict[str, Any]:
    row = await _find(ctx, args.person)
    await ctx.db.execute("UPDATE people SET title = %s WHERE id = %s", (args.title, row["id"]))
    return {"person": row["name"], "title": args.title}


set_person_title = propose(
    name="set_person_title",
    args=SetTitleArgs,
    description=(
        "Propose a new title for a person. This only shows a confirmation card; nothing"
        " changes until the person presses Confirm."
    ),
    check=_check,
    apply=_apply,
)


@capability("people", audience=SUPER_ADMIN, tools=[set_person_title], order=90)
def people_prompt(ctx: PromptContext) -> str:
    return (
        "You may propose a person's title with set_person_title. It only proposes: never say"
        " the title was changed; say it waits for confirmation on the card."
    )
