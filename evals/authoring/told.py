"""What the assistant is told (`python -m evals prompt`): for an audience and a page, the
composed system prompt, this turn's context block and the tool list with schemas, composed by
`compose_chat` on the eval fixtures exactly as /api/chat composes a turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from app import embed
from app.chat.compose import compose_chat
from app.chat.page_context import PageContextError, load_page_context, selection_ids_by_name
from app.identity import ROLES, audience_of, demo_identity
from app.settings import Settings
from evals.execute.env import EvalEnv, eval_env
from evals.settings import conninfo


class PromptError(ValueError):
    """An unknown role, page or selection; the message says which and what is known."""


@dataclass(frozen=True)
class Told:
    role: str | None
    page: str
    system_prompt: str
    turn_context: str
    capabilities: list[str]
    tools: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role or "anonymous", "page": self.page,
                "capabilities": self.capabilities, "system_prompt": self.system_prompt,
                "turn_context": self.turn_context, "tools": self.tools}

    def as_text(self) -> str:
        tools = "\n\n".join(
            f"### {t['function']['name']}\n{t['function'].get('description', '')}\n"
            + json.dumps(t["function"].get("parameters", {}), indent=2)
            for t in self.tools)
        return (f"# What the assistant is told: {self.role or 'anonymous'} on {self.page}\n"
                f"capabilities: {', '.join(self.capabilities)}\n\n"
                f"## System prompt\n{self.system_prompt}\n\n"
                f"## This turn's context\n{self.turn_context}\n\n"
                f"## Tools ({len(self.tools)})\n{tools}\n")


async def told(env: EvalEnv, role: str | None, page: str = "/",
               selection: list[str] | None = None) -> Told:
    """Compose for this audience and page on the eval fixtures (the demo catalogue)."""
    if role is not None and role not in ROLES:
        raise PromptError(f"unknown role {role!r}; roles: {', '.join(ROLES)} (or none:"
                          " anonymous)")
    identity = await demo_identity(env.db, role) if role else None
    try:
        ids = await selection_ids_by_name(env.db, page, selection) if selection else []
        context = await load_page_context(env.db, page, ids, role=audience_of(identity))
    except (PageContextError, ValueError) as exc:
        raise PromptError(f"page {page!r}: {exc}") from exc
    composed = await compose_chat(env.db, identity=identity, page=context,
                                  manuals=env.library)
    return Told(role, page, composed.system_prompt, composed.turn_context,
                composed.capabilities, composed.tool_schemas())


@asynccontextmanager
async def fixture_env(settings: Settings) -> AsyncIterator[EvalEnv]:
    """The eval fixtures (demo catalogue, manuals served over HTTP) on a fresh database."""
    async with eval_env(conninfo(settings), settings, embed.default_embedder()) as env:
        yield env


async def told_for(settings: Settings, role: str | None, page: str,
                   selection: list[str] | None = None) -> Told:
    """What the assistant is told for this audience and page, composed on the fixtures
    (PromptError for an unknown role, page or selection)."""
    async with fixture_env(settings) as env:
        return await told(env, role, page, selection)
