"""Conversations and turns: every chat turn is stored under a pseudonymous user reference."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

import psycopg

from app.db import Database, Row
from app.text import storable


def user_ref(secret: bytes, subject: str) -> str:
    """A stable pseudonym for a person or an anonymous session; reveals neither."""
    return "u_" + hmac.new(secret, subject.encode(), hashlib.sha256).hexdigest()[:20]


class ConversationNotFound(LookupError):
    pass


async def load_history(db: Database, conversation_id: str, ref: str) -> list[dict[str, Any]]:
    """The text of earlier turns (user and assistant), oldest first, for this user only."""
    try:
        uuid.UUID(conversation_id)
    except ValueError:
        raise ConversationNotFound(conversation_id) from None
    conv = await db.fetchone("SELECT user_ref FROM conversations WHERE id = %s", (conversation_id,))
    if conv is None or conv["user_ref"] != ref:
        raise ConversationNotFound(conversation_id)
    rows = await db.fetch(
        "SELECT messages, answer FROM turns WHERE conversation_id = %s ORDER BY id",
        (conversation_id,),
    )
    history: list[dict[str, Any]] = []
    for row in rows:
        user_text = row["messages"].get("user", "")
        history += [{"role": "user", "content": user_text},
                    {"role": "assistant", "content": row["answer"]}]
    return history


# What a catalogue version keeps of each machine: what an answer about it is checked against.
_CATALOG = ("SELECT slug, name, brand, category, aliases, specs FROM machines ORDER BY slug")


async def catalog_version(conn: psycopg.AsyncConnection[Row]) -> str:
    """The digest of the catalogue as it is now, kept in catalog_versions the first time it
    is seen (`conn` inside the turn's transaction)."""
    cur = await conn.execute(_CATALOG)
    rows = await cur.fetchall()
    text = json.dumps([dict(r) for r in rows], sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    await conn.execute("INSERT INTO catalog_versions (digest, machines) VALUES (%s, %s)"
                       " ON CONFLICT (digest) DO NOTHING", (digest, text))
    return digest


async def record_turn(
    db: Database, conversation_id: str | None, ref: str, user_text: str, *, model: str,
    answer: str, messages: list[dict[str, Any]], tool_calls: list[dict[str, Any]],
    usage: dict[str, Any], latency_ms: int, page_path: str | None = None,
    audience: str | None = None,
) -> str:
    """Store one turn (creating the conversation when new): the model that answered, its
    answer, the messages it was sent, the tool calls it made and its token usage, with the
    page and audience it was asked from, and the catalogue it was answered with; returns the
    conversation id."""
    async with db.transaction() as conn:
        version = await catalog_version(conn)
        if conversation_id is None:
            conversation_id = str(uuid.uuid4())
            await conn.execute(
                "INSERT INTO conversations (id, user_ref) VALUES (%s, %s)", (conversation_id, ref)
            )
        await conn.execute(
            "INSERT INTO turns (conversation_id, model, messages, answer, tool_calls, usage,"
            " latency_ms, page_path, audience, catalog_version)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (
                conversation_id,
                model,
                json.dumps(storable({"user": user_text, "all": _redact_images(messages)}),
                           default=str),
                storable(answer),
                json.dumps(storable(tool_calls), default=str),
                json.dumps(storable(usage)),
                latency_ms,
                page_path,
                audience,
                version,
            ),
        )
    return conversation_id


def _redact_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without inline image bytes (photos are kept as attachments, not in turns)."""
    out = []
    for m in messages:
        if isinstance(m.get("content"), list):
            parts = [
                p if p.get("type") != "image_url" else {"type": "image_url", "image_url": "[photo]"}
                for p in m["content"]
            ]
            m = {**m, "content": parts}
        out.append(m)
    return out


async def set_consent(db: Database, ref: str, consent: bool, *,
                      person_id: int | None = None) -> None:
    """Record whether this person lets the lab turn their conversations into test cases. A
    signed-in person's decision (`person_id`) is theirs, whatever reference they use, and
    decides for the conversations they held signed in; an anonymous one is kept under `ref`
    and alone makes that session's conversations cases."""
    if person_id is None:
        await db.execute(
            "INSERT INTO research_consent (user_ref, consent) VALUES (%s, %s)"
            " ON CONFLICT (user_ref) DO UPDATE SET consent = EXCLUDED.consent,"
            " recorded_at = now()", (ref, consent))
        return
    async with db.transaction() as conn:
        await conn.execute(_LINK, (ref, person_id))
        await conn.execute(
            "INSERT INTO person_consent (person_id, consent) VALUES (%s, %s)"
            " ON CONFLICT (person_id) DO UPDATE SET consent = EXCLUDED.consent,"
            " recorded_at = now()", (person_id, consent))


async def get_consent(db: Database, ref: str, *, person_id: int | None = None) -> bool:
    """The decision `set_consent` recorded (no until there is one)."""
    if person_id is None:
        row = await db.fetchone("SELECT consent FROM research_consent WHERE user_ref = %s",
                                (ref,))
    else:
        row = await db.fetchone("SELECT consent FROM person_consent WHERE person_id = %s",
                                (person_id,))
    return bool(row and row["consent"])


# A reference belongs to the first person it was linked to: an anonymous session ends when
# someone signs in from it, so no second person can sign in from the same one.
_LINK = ("INSERT INTO person_refs (user_ref, person_id) VALUES (%s, %s)"
         " ON CONFLICT (user_ref) DO NOTHING")


async def link_ref(db: Database, ref: str, person_id: int) -> None:
    """Make `ref` (the person's own, or the anonymous session they signed in from) theirs:
    their consent decides for the conversations they held signed in under it, and their no
    for the anonymous ones too (the `conversation_consent` view)."""
    await db.execute(_LINK, (ref, person_id))
