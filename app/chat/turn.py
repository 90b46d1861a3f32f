"""Preparing one turn: what /api/chat, /v1/chat/completions and the evals all do before the
tool loop runs: compose what the assistant is told, the tools' context, and the messages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.capabilities import PageContext, Photo, ToolContext
from app.chat.compose import ComposedChat, compose_chat, pdf_parts, user_message
from app.chat.qr import QrReader, read_photo
from app.db import Database
from app.identity import Identity
from app.manuals.library import ManualLibrary
from app.settings import Settings


@dataclass
class PreparedTurn:
    composed: ComposedChat
    ctx: ToolContext
    messages: list[dict[str, Any]]


async def prepare_turn(
    db: Database, settings: Settings, *, identity: Identity | None, page: PageContext,
    text: str, history: list[dict[str, Any]] | None = None, photos: tuple[Photo, ...] = (),
    manuals: ManualLibrary | None = None, accepts_pdf: bool = False,
    composed: ComposedChat | None = None, read_qr: QrReader = read_photo,
) -> PreparedTurn:
    """The composed prompt and tools (or `composed`, already made for this audience and page),
    the context the tools run in, and the conversation with this turn's user message (attached
    manuals as PDF parts for a model that reads them). `read_qr` reads the photos' QR codes
    (the evals give an item's own codes instead)."""
    if composed is None:
        composed = await compose_chat(db, identity=identity, page=page, photos=photos,
                                      manuals=manuals, read_qr=read_qr)
    ctx = ToolContext(db=db, settings=settings, identity=identity, page=page, photos=photos,
                      manuals=manuals)
    files = []
    if manuals is not None and composed.attached_manuals and accepts_pdf:
        files = pdf_parts(composed.attached_manuals,
                          lambda key: manuals.store.path(key).read_bytes())
    return PreparedTurn(composed, ctx, [*(history or []), user_message(text, photos, files)])


async def store_photos(db: Database, photos: tuple[Photo, ...], identity: Identity | None
                       ) -> None:
    """Store a turn's photos before its tools run, so a tool can refer to one by its
    attachment_id (identify_tools records intake items against it)."""
    for p in photos:
        await db.execute(
            "INSERT INTO attachments (id, name, content_type, data, uploaded_by)"
            " VALUES (%s,%s,%s,%s,%s)",
            (p.attachment_id, p.name, p.content_type, p.data,
             identity.person_id if identity else None),
        )
