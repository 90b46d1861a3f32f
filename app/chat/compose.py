"""compose_chat: the one function that builds a chat turn, for /api/chat and the evals alike."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app import catalog
from app.capabilities import REGISTRY, PageContext, Photo, PromptContext, Tool
from app.chat.page_context import where_block
from app.chat.qr import QrHint, QrReader, qr_hints, qr_section, read_photo
from app.db import Database
from app.identity import Identity
from app.manuals.library import ManualLibrary


@dataclass
class ComposedChat:
    """Everything the model is given for one turn besides the conversation itself."""

    system_prompt: str  # the capability fragments: the same for every turn of an audience
    turn_context: str  # where the person is, who they are, this turn's QR codes and manuals
    tools: list[Tool]
    capabilities: list[str]
    page: PageContext
    identity: Identity | None
    photos: tuple[Photo, ...] = ()
    qr_hints: list[QrHint] = field(default_factory=list)
    attached_manuals: list[dict[str, Any]] = field(default_factory=list)
    # Each capability's fragment of system_prompt, by name: what a change to the prompt is
    # traced back to (the evals' impact of a change).
    fragments: dict[str, str] = field(default_factory=dict)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools]

    def system_messages(self) -> list[dict[str, Any]]:
        """Two system messages: the stable prompt first, so a server-side prompt cache (llama.cpp
        keeps one per slot) reuses it and the tool schemas after it; then this turn's part."""
        return [{"role": "system", "content": self.system_prompt},
                {"role": "system", "content": self.turn_context}]


def who_line(identity: Identity | None) -> str:
    if identity is None:
        return "Nobody is signed in: you are talking with an anonymous visitor."
    title = f", {identity.title}" if identity.title else ""
    return f"You are talking with {identity.name} ({identity.role.replace('_', ' ')}{title})."


async def compose_chat(
    db: Database,
    *,
    identity: Identity | None,
    page: PageContext,
    photos: tuple[Photo, ...] = (),
    manuals: ManualLibrary | None = None,
    read_qr: QrReader = read_photo,
) -> ComposedChat:
    """Compose the system prompt and tool set for who is asking, where, with these photos
    (their QR codes read by `read_qr`: the evals give a case's own codes instead)."""
    machines = await catalog.list_machines(db)
    slug = page.machine["slug"] if page.machine else None
    attached = await manuals.attached_for(slug) if manuals is not None else []
    ctx = PromptContext(identity=identity, page=page, catalogue=machines, photos=photos,
                        attached_manuals=tuple(attached))
    caps = REGISTRY.for_context(ctx)
    fragments = [cap.prompt(ctx).strip() for cap in caps]
    turn = [where_block(page) + "\n" + who_line(identity)]
    if attached:
        turn.append(attached_section(attached))
    # Decoding is CPU work: off the event loop, so one big photo does not stall the server.
    hints = await asyncio.to_thread(qr_hints, photos, {m["slug"] for m in machines}, read_qr) \
        if photos else []
    qr = qr_section(hints, {m["slug"]: m["name"] for m in machines})
    if qr:
        turn.append(qr)
    return ComposedChat(
        system_prompt="\n\n".join(s for s in fragments if s),
        turn_context="\n\n".join(turn),
        tools=[t for cap in caps for t in cap.tools],
        capabilities=[cap.name for cap in caps],
        page=page,
        identity=identity,
        photos=photos,
        qr_hints=hints,
        attached_manuals=attached,
        fragments={cap.name: text for cap, text in zip(caps, fragments, strict=True)},
    )


def attached_section(attached: list[dict[str, Any]]) -> str:
    lines = [
        f"- {m['title']} ({m['page_count']} pages): cite page N as"
        f" [{m['title']}, p. N](#cite-{m['ref']}-N)"
        for m in attached
    ]
    return (
        "## Manuals attached to this turn\n"
        "Scanned manuals of this machine: search_manual cannot find their text. When your"
        " model can read PDFs they come with the message; cite their pages only as below,"
        " and only pages you have read.\n" + "\n".join(lines)
    )


def pdf_parts(attached: list[dict[str, Any]], read: Callable[[str], bytes]) -> list[dict]:
    """File parts carrying attached manuals whole, for models that read PDFs."""
    parts = []
    for m in attached:
        data = base64.b64encode(read(m["key"])).decode()
        parts.append({"type": "file", "file": {"filename": m["title"] + ".pdf",
                                               "file_data": f"data:application/pdf;base64,{data}"}})
    return parts


def attachment_hint(photos: tuple[Photo, ...]) -> str:
    """The chat's own hint naming each attached photo, as the chat page sends it."""
    parts = " ".join(f"attachment_id={p.attachment_id} name={p.name}" for p in photos)
    return f"[Attached photos: {parts}]"


def user_message(
    text: str, photos: tuple[Photo, ...] = (), files: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The final user message: text plus, for photos, the hint and one image part each, and
    any attached manuals as file parts."""
    if not photos and not files:
        return {"role": "user", "content": text}
    hint = f"\n\n{attachment_hint(photos)}" if photos else ""
    content: list[dict[str, Any]] = [{"type": "text", "text": text + hint}, *(files or [])]
    for p in photos:
        data = base64.b64encode(p.data).decode()
        content.append(
            {"type": "image_url", "image_url": {"url": f"data:{p.content_type};base64,{data}"}}
        )
    return {"role": "user", "content": content}
