"""Where an item runs: the page, who is asking, the selected rows and the catalogue phase (a
case's or a scenario's `context:`), and what the app offers there."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.capabilities import REGISTRY, Capability, PageContext, PromptContext
from app.identity import Identity
from evals.checks import About
from evals.fixtures.catalog import fixtures_for
from evals.fixtures.lab_catalog import Catalog


class Context(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)
    page: Literal["gallery", "tool"] = "gallery"
    tool_id: str | None = Field(default=None, alias="toolId")
    as_: Literal["student", "staff", "super_admin"] | None = Field(default=None, alias="as")
    path: str | None = None
    selection: tuple[str, ...] = ()
    catalog: Catalog = "demo"
    curate: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Context:
        if self.page == "tool" and not self.tool_id:
            raise ValueError("page: tool needs a toolId")
        if self.tool_id and self.page != "tool":
            raise ValueError("toolId goes with page: tool")
        if self.curate and self.page != "tool":
            raise ValueError("curate: true goes with page: tool")
        if self.tool_id and self.tool_id not in fixtures_for(self.catalog).slugs:
            raise ValueError(f"toolId {self.tool_id!r} is not a slug in the {self.catalog}"
                             f" catalogue: {sorted(fixtures_for(self.catalog).slugs)}")
        if self.path and self.page == "tool":
            raise ValueError("give either page: tool with toolId, or a path")
        if self.selection and not self.path:
            raise ValueError("selection needs a path (the page the rows are on)")
        return self

    @property
    def page_path(self) -> str:
        if self.tool_id:
            return f"/tools/{self.tool_id}" + ("/curate" if self.curate else "")
        return self.path or "/"

    @property
    def key(self) -> str:
        """The audience, page and catalogue an item is composed for: a comparison point
        freezes what the assistant is told under each key."""
        return f"{self.as_ or 'anonymous'} {self.page_path} {self.catalog}"

    def about(self, pictures: tuple[str, ...] = ()) -> About:
        """What a judged check tells the judge of where the item ran."""
        return About(self.page_path, self.as_, self.catalog, pictures)


def context_for(page: str, role: str | None) -> dict[str, Any]:
    """A case's `context:` for a page path and an audience: the inverse of page_path."""
    context: dict[str, Any] = {}
    parts = page.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "tools":
        context.update(page="tool", toolId=parts[1])
        if len(parts) == 3 and parts[2] == "curate":
            context["curate"] = True
    elif page not in ("", "/"):
        context["path"] = page
    if role:
        context["as"] = role
    return context


def offered_capabilities(context: Context) -> list[Capability]:
    """The capabilities compose_chat gives this audience on this page (from the registry
    alone)."""
    identity = Identity(0, "eval", "eval", context.as_) if context.as_ else None
    kind = ("curate" if context.curate else "tool") if context.tool_id else \
        {"/staff/tickets": "tickets", "/people": "people"}.get(context.page_path, "gallery")
    machine = {"slug": context.tool_id} if context.tool_id else None
    ctx = PromptContext(identity=identity, page=PageContext(context.page_path, kind, machine),
                        catalogue=[])
    return REGISTRY.for_context(ctx)


def offered_tools(context: Context) -> set[str]:
    """The tools compose_chat offers this audience on this page (from the registry alone)."""
    return {t.name for cap in offered_capabilities(context) for t in cap.tools}
