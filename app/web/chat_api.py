"""/api routes: the demo sign-in, chat (JSON or streamed NDJSON), and confirmation cards."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from app.capabilities._proposals import ProposalError, decide_proposal
from app.chat.loop import ToolCallRecord
from app.chat.models import ModelCallError
from app.conversations import get_consent, set_consent
from app.identity import ROLES, Identity, UnknownRoleError, demo_identity, identity_by_id
from app.web.auth import StaffListError, role_of
from app.web.errors import ClientError, model_call_failed, request_id, server_error
from app.web.requests import PhotoIn, decode_photos, read_json, turn_input
from app.web.sessions import (
    anonymous_ref,
    end_session,
    person_ref,
    session_person,
    start_session,
)
from app.web.turns import serve_turn

SESSION_BODY_BYTES = 4096
# More than any MAX_PHOTOS would allow: refused while the body is parsed, not after it is built.
MAX_PHOTOS_IN_BODY = 50
log = logging.getLogger("app.web")


class SessionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str | None = Field(description="student, staff, super_admin, or null to sign out")


class ConsentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    consent: bool = Field(description="may the lab turn my conversations into test cases")


class PageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default="/", max_length=300)
    selection: list[int] = Field(default=[], max_length=100)


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str
    conversation_id: str | None = Field(default=None, max_length=100)
    page: PageIn = PageIn()
    photos: list[PhotoIn] = Field(default=[], max_length=MAX_PHOTOS_IN_BODY)
    stream: bool = False


async def current_identity(request: Request) -> Identity | None:
    """Who is signed in, with the role the staff list gives them now (a person removed from
    it is a student from their next request)."""
    person_id = await session_person(request)
    if person_id is None:
        return None
    identity = await identity_by_id(request.app.state.db, person_id)
    if identity is None or identity.email is None:
        return identity  # a demo person: the demo sign-in chose the role
    try:
        role = role_of(request.app.state.settings, identity.email)
    except StaffListError as exc:
        log.error("request %s: %s", request_id(request), exc)
        role = "student"  # fail closed: no staff tools while the list cannot be read
    return replace(identity, role=role)


def current_ref(request: Request, identity: Identity | None) -> str:
    secret: bytes = request.app.state.secret
    if identity is not None:
        return person_ref(secret, identity.person_id)
    anon = request.session.setdefault("anon", secrets.token_hex(8))
    return anonymous_ref(secret, anon)


async def session_post(request: Request) -> JSONResponse:
    """The demo sign-in: any role, no password. It exists only with DEMO_SIGNIN=1."""
    if not request.app.state.settings.demo_signin:
        raise ClientError(404, "the demo sign-in is off; sign in at /auth/login")
    body = await read_json(request, SessionIn, limit=SESSION_BODY_BYTES)
    if body.role is None:
        await end_session(request)
        return JSONResponse({"signed_in": None})
    try:
        identity = await demo_identity(request.app.state.db, body.role)
    except UnknownRoleError as exc:
        raise ClientError(400, str(exc)) from exc
    await start_session(request, identity.person_id, demo=True)
    return JSONResponse({"signed_in": _person(identity)})


async def me(request: Request) -> JSONResponse:
    identity = await current_identity(request)
    settings = request.app.state.settings
    return JSONResponse({"signed_in": _person(identity) if identity else None, "roles": ROLES,
                         "demo_signin": settings.demo_signin,
                         "sign_in": "/auth/login" if settings.oidc_issuer else None})


async def consent(request: Request) -> JSONResponse:
    """GET: whether this person (or anonymous session) lets the lab turn their conversations
    into test cases; POST {"consent": bool}: record it. A signed-in person's decision is
    kept against them and covers the conversations they held signed in; an anonymous one is
    kept against the session's reference, and only it makes that session's conversations
    cases. Off until they say yes."""
    identity = await current_identity(request)
    ref = current_ref(request, identity)
    person_id = identity.person_id if identity is not None else None
    db = request.app.state.db
    if request.method == "POST":
        body = await read_json(request, ConsentIn, limit=SESSION_BODY_BYTES)
        await set_consent(db, ref, body.consent, person_id=person_id)
    return JSONResponse({"consent": await get_consent(db, ref, person_id=person_id)})


def _person(identity: Identity) -> dict[str, Any]:
    return {"name": identity.name, "role": identity.role, "title": identity.title}


async def chat(request: Request) -> Response:
    state = request.app.state
    body = await read_json(request, ChatIn, limit=state.settings.max_body_bytes)
    turn = turn_input(state.settings, {"message": body.message, "photos": body.photos})
    photos = await asyncio.to_thread(decode_photos, state.settings, turn.photos)
    identity = await current_identity(request)
    kwargs: dict[str, Any] = dict(
        db=state.db, settings=state.settings, model=state.chat_model(), identity=identity,
        ref=current_ref(request, identity), text=turn.message,
        conversation_id=body.conversation_id, page_path=body.page.path,
        selection=body.page.selection, photos=photos, manuals=state.manuals,
    )
    if not body.stream:
        try:
            served = await serve_turn(**kwargs)
        except ModelCallError as exc:
            raise model_call_failed(request, exc) from exc
        return JSONResponse(_jsonable(served.to_json()))
    return StreamingResponse(_stream(request, kwargs), media_type="application/x-ndjson")


async def _stream(request: Request, kwargs: dict[str, Any]) -> AsyncIterator[bytes]:
    """NDJSON events: one per tool call as it runs, then the whole turn (or an error)."""
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def on_tool_call(record: ToolCallRecord) -> None:
        await queue.put({"type": "tool_call", "name": record.name, "arguments": record.arguments,
                         "error": record.error})

    async def worker() -> None:
        try:
            served = await serve_turn(**kwargs, on_tool_call=on_tool_call)
            await queue.put({"type": "turn", **served.to_json()})
        except ClientError as exc:
            await queue.put({"type": "error", "status": exc.status, "error": exc.message})
        except ModelCallError as exc:
            failed = model_call_failed(request, exc)
            await queue.put({"type": "error", "status": failed.status, "error": failed.message})
        except Exception as exc:  # the answer is under way: say so in the stream, log it
            body = json.loads(bytes(server_error(request, exc).body))
            await queue.put({"type": "error", "status": 500, "error": body["error"]})
        finally:
            await queue.put(None)

    task = asyncio.create_task(worker())
    try:
        while (event := await queue.get()) is not None:
            yield (json.dumps(_jsonable(event)) + "\n").encode()
    finally:
        await task


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))


async def proposal_decide(request: Request) -> JSONResponse:
    identity = await current_identity(request)
    decision = request.path_params["decision"]
    if decision not in ("confirm", "reject"):
        raise ClientError(404, f"unknown decision {decision!r}; use confirm or reject")
    confirm = decision == "confirm"
    try:
        result = await decide_proposal(
            request.app.state.db, request.app.state.settings, identity,
            request.path_params["proposal_id"], confirm=confirm,
        )
    except ProposalError as exc:
        raise ClientError(exc.status, str(exc)) from exc
    return JSONResponse(_jsonable(result))
