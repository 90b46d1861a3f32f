"""Each case composed exactly as /api/chat composes a turn (compose_chat, prepare_turn), with
writes and live reads stubbed and the case's own QR codes (`qr_codes:`) read instead of its
photos' decoded ones; and the evidence a citation check needs, fetched over HTTP."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, replace
from typing import Any

import httpx

from app.capabilities import PageContext, Photo, ToolContext
from app.chat.compose import ComposedChat, compose_chat
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.chat.qr import QrReader, read_photo
from app.chat.turn import prepare_turn
from app.identity import Identity, audience_of, demo_identity
from app.manuals.citations import DocumentEvidence, extract_citations, gather_evidence
from evals.execute.env import EvalEnv
from evals.execute.stubs import stub_tools
from evals.load.cases import Case, QrCodes
from evals.settings import PHOTOS_DIR


@dataclass
class ComposedCase:
    composed: ComposedChat
    ctx: ToolContext
    messages: list[dict[str, Any]]
    identity: Identity | None


def load_photo(name: str) -> Photo:
    data = (PHOTOS_DIR / name).read_bytes()
    # A fixed id per file, as the chat page sends one per upload.
    return Photo(name=name, content_type="image/jpeg", data=data,
                 attachment_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"eval-photo:{name}")))


async def compose_case(env: EvalEnv, case: Case, *, accepts_pdf: bool = False) -> ComposedCase:
    """Compose a case exactly as /api/chat composes a turn, then stub writes and live reads."""
    ctx_spec = case.context
    key = (env.catalog, ctx_spec.as_, ctx_spec.page_path, ctx_spec.selection, case.photos,
           tuple(sorted(case.qr_codes.items())))
    if key not in env.composed:  # one composition, however many cases wait for it
        env.composed[key] = asyncio.create_task(_compose_context(env, case))
    try:
        identity, page, shared, photos = await asyncio.shield(env.composed[key])
    except Exception:
        env.composed.pop(key, None)  # the next case composes again
        raise
    composed = replace(shared, tools=list(shared.tools), qr_hints=list(shared.qr_hints),
                       attached_manuals=list(shared.attached_manuals))  # a case's own copy
    turn = await prepare_turn(env.db, env.settings, identity=identity, page=page,
                              text=case.prompt, history=case.history_messages(), photos=photos,
                              manuals=env.library, accepts_pdf=accepts_pdf, composed=composed)
    return ComposedCase(turn.composed, turn.ctx, turn.messages, identity)


async def _compose_context(env: EvalEnv, case: Case
                           ) -> tuple[Identity | None, PageContext, ComposedChat,
                                      tuple[Photo, ...]]:
    ctx_spec = case.context
    identity = await demo_identity(env.db, ctx_spec.as_) if ctx_spec.as_ else None
    path = ctx_spec.page_path
    ids = await selection_ids_by_name(env.db, path, list(ctx_spec.selection)) \
        if ctx_spec.selection else []
    page = await load_page_context(env.db, path, ids, role=audience_of(identity))
    photos = tuple(load_photo(n) for n in case.photos)
    composed = await compose_chat(env.db, identity=identity, page=page, photos=photos,
                                  manuals=env.library, read_qr=qr_reader(case.qr_codes))
    composed.tools = stub_tools(composed.tools)
    return identity, page, composed, photos


def qr_reader(qr_codes: QrCodes) -> QrReader:
    """The QR reader for an item's photos (a case's or a scenario's): the codes its `qr_codes:`
    gives a photo, else what the route's reader decodes from it."""
    def read(photo: Photo) -> list[str]:
        codes = qr_codes.get(photo.name)
        return list(codes) if codes is not None else read_photo(photo)
    return read


async def citation_evidence(env: EvalEnv, answer: str, search_results: list[dict[str, Any]],
                            attached: list[dict[str, Any]]) -> dict[str, DocumentEvidence]:
    """Real GETs of every cited document, plus its stored page texts."""
    cites = extract_citations(answer, search_results, attached)
    texts: dict[str, dict[int, str]] = {}
    for c in cites:
        if c.document and (key := env.library.store.key_for(c.document)):
            texts[c.document] = await env.library.page_texts(key)
    async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
        return await gather_evidence(cites, texts, client, may_fetch=env.library.store.serves)
