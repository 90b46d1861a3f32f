"""Manual search: answers from the machines' PDF manuals, with page citations that resolve."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.capabilities._context import PromptContext, ToolContext
from app.capabilities._registry import EVERYONE, ToolError, capability, tool


class SearchManualArgs(BaseModel):
    question: str = Field(min_length=2, max_length=500, description="What to look up")
    slug: str | None = Field(default=None, description="Only this machine's manuals (its slug)")


class PassageOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    ref: str
    title: str
    page: int
    url: str
    text: str


class SearchManualResult(BaseModel):
    # Examples for frozen responses (the evals' workspace offers them); not in the contract.
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"passages": [
            {"ref": "p12", "title": "Form 4 Manual", "machine": "Form 4", "page": 1,
             "url": "http://127.0.0.1:8000/blobs/manuals/form-4/form-4-manual.pdf#page=1",
             "text": "The Form 4 is a resin 3D printer. Wear nitrile gloves and safety glasses"
                     " whenever you handle liquid resin or uncured parts. Work in a ventilated"
                     " room."},
            {"ref": "p16", "title": "Form 4 Manual", "machine": "Form 4", "page": 5,
             "url": "http://127.0.0.1:8000/blobs/manuals/form-4/form-4-manual.pdf#page=5",
             "text": "Wash printed parts in Form Wash with isopropyl alcohol for ten minutes,"
                     " then let them dry completely. Cure parts in Form Cure with the time and"
                     " temperature for the resin."}]},
        {"passages": [], "note": "No manual passage matches; say the manuals do not say."},
    ]})
    passages: list[PassageOut]
    note: str | None = None


@tool(kind="read", args=SearchManualArgs, result=SearchManualResult)
async def search_manual(ctx: ToolContext, args: SearchManualArgs) -> dict[str, Any]:
    """Search the machines' manuals. Returns passages, each with a ref, document title, page
    and the address of that page. Cite a passage as [Title, p. N](#cite-REF)."""
    if ctx.manuals is None:
        raise ToolError("manual search is not available right now")
    found = await ctx.manuals.search(args.question, slug=args.slug)
    if not found:
        return {"passages": [], "note": "No manual passage matches; say the manuals do not say."}
    return {"passages": found}


@capability("manuals", audience=EVERYONE, tools=[search_manual], order=30)
def manuals_prompt(ctx: PromptContext) -> str:
    text = (
        "## Manuals\n"
        "For how to operate, clean, maintain or set up a machine, call search_manual and answer"
        " from the passages it returns. Cite every fact you take from a passage right after it,"
        " as a link labelled with the document title and page whose target is the passage's"
        " ref: [Form 4 Manual, p. 3](#cite-p12). Cite only refs that search_manual returned;"
        " never make up a page, a ref or a link. If no passage answers, say the manuals do not"
        " cover it."
    )
    return text
