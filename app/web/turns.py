"""One chat turn as the server runs it: compose, run the loop, store attachments and the turn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.capabilities import Photo
from app.chat.compose import ComposedChat
from app.chat.loop import ToolCallRecord, TurnResult, run_turn
from app.chat.models import ChatModel
from app.chat.page_context import PageContextError, load_page_context
from app.chat.turn import prepare_turn, store_photos
from app.conversations import ConversationNotFound, load_history, record_turn
from app.db import Database
from app.identity import Identity, audience_of
from app.manuals.citations import resolve_links, searched_passages
from app.manuals.library import ManualLibrary
from app.settings import Settings
from app.web.errors import ClientError


@dataclass
class ServedTurn:
    conversation_id: str
    composed: ComposedChat
    result: TurnResult

    def search_results(self) -> list[dict[str, Any]]:
        return searched_passages((c.name, c.result) for c in self.result.tool_calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            # The model cites #cite-<ref>; people get the addresses those stand for.
            "answer": resolve_links(self.result.answer, self.search_results(),
                                    self.composed.attached_manuals),
            "tool_calls": [
                {"name": c.name, "arguments": c.arguments, "result": c.result}
                for c in self.result.tool_calls
            ],
            "cards": self.result.proposals,
            "manuals": [
                {k: m[k] for k in ("title", "address", "ref", "page_count")}
                for m in self.composed.attached_manuals
            ],
            "qr_hints": [h.text for h in self.composed.qr_hints],
        }


async def serve_turn(
    *,
    db: Database,
    settings: Settings,
    model: ChatModel,
    identity: Identity | None,
    ref: str,
    text: str,
    history: list[dict[str, Any]] | None = None,
    conversation_id: str | None = None,
    page_path: str = "/",
    selection: list[int] | None = None,
    photos: tuple[Photo, ...] = (),
    on_tool_call: Callable[[ToolCallRecord], Awaitable[None]] | None = None,
    manuals: ManualLibrary | None = None,
) -> ServedTurn:
    try:
        page = await load_page_context(db, page_path, selection or [],
                                       role=audience_of(identity))
    except PageContextError as exc:
        raise ClientError(400, str(exc)) from exc
    if conversation_id is not None:
        try:
            history = await load_history(db, conversation_id, ref)
        except ConversationNotFound:
            raise ClientError(404, f"no conversation {conversation_id!r}") from None
    turn = await prepare_turn(db, settings, identity=identity, page=page, text=text,
                              history=history, photos=photos, manuals=manuals,
                              accepts_pdf=model.accepts_pdf)
    # Photos are stored first so a tool can refer to them; removed again if the turn fails.
    await store_photos(db, photos, identity)
    try:
        result = await run_turn(model, turn.composed, turn.messages, turn.ctx,
                                max_steps=settings.max_tool_steps, on_tool_call=on_tool_call)
    except BaseException:
        if photos:
            await db.execute(
                "DELETE FROM attachments a WHERE a.id = ANY(%s::uuid[]) AND NOT EXISTS"
                " (SELECT 1 FROM intake_items i WHERE i.attachment_id = a.id)",
                ([p.attachment_id for p in photos],),
            )
        raise
    stored = result.to_dict()
    conversation_id = await record_turn(
        db, conversation_id, ref, text, model=result.model, answer=result.answer,
        messages=result.messages, tool_calls=stored["tool_calls"], usage=stored["usage"],
        latency_ms=result.latency_ms, page_path=page.path, audience=audience_of(identity))
    return ServedTurn(conversation_id, turn.composed, result)
