"""POST /v1/chat/completions: the assistant behind an OpenAI-compatible endpoint.

Callers are anonymous visitors on the gallery page. A caller's own system messages are
ignored: the system prompt is always the one compose_chat builds on the server.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from app.chat.models import ModelCallError
from app.conversations import user_ref
from app.web.errors import ClientError, model_call_failed
from app.web.requests import PhotoIn, PlainText, decode_photos, read_json, turn_input
from app.web.turns import serve_turn

ASSISTANT_MODEL_NAME = "makerlab-assistant"
MAX_PARTS = 50  # content parts in one message: more than any photo limit allows


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["text"]
    text: str


class ImageUrl(BaseModel):
    model_config = ConfigDict(extra="allow")
    url: str


class ImagePart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["image_url"]
    image_url: ImageUrl


Part = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | Annotated[list[Part], Field(max_length=MAX_PARTS)] | None = None


class CompletionIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send many optional fields
    model: PlainText = ASSISTANT_MODEL_NAME  # echoed in the reply: text, no control character
    messages: list[MessageIn] = Field(min_length=1, max_length=200)
    stream: bool = False


def _split(content: str | list[Part] | None) -> tuple[str, list[PhotoIn]]:
    """A message's text and its images (as the chat route's photos)."""
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts, photos = [], []
    for i, part in enumerate(content):
        if isinstance(part, TextPart):
            texts.append(part.text)
        else:
            if not part.image_url.url.startswith("data:"):
                raise ClientError(400, f"image part {i}: only data: URLs are accepted")
            photos.append(PhotoIn(name=f"image-{i + 1}", data=part.image_url.url))
    return "\n".join(texts), photos


async def completions(request: Request) -> Response:
    state = request.app.state
    body = await read_json(request, CompletionIn, limit=state.settings.max_body_bytes)
    convo = [m for m in body.messages if m.role in ("user", "assistant")]
    if not convo or convo[-1].role != "user":
        raise ClientError(400, "messages must end with a user message")
    history = []
    for m in convo[:-1]:
        text, _ = _split(m.content)  # earlier photos are not sent again
        history.append({"role": m.role, "content": text})
    text, photo_parts = _split(convo[-1].content)
    # The same limits as /api/chat: one validation model for both routes.
    turn = turn_input(state.settings, {"message": text, "history": history,
                                       "photos": photo_parts})
    photos = await asyncio.to_thread(decode_photos, state.settings, turn.photos)
    try:
        served = await serve_turn(
            db=state.db, settings=state.settings, model=state.chat_model(), identity=None,
            ref=user_ref(state.secret, "openai-endpoint"), text=turn.message,
            history=[h.model_dump() for h in turn.history], photos=photos,
            manuals=state.manuals,
        )
    except ModelCallError as exc:
        raise model_call_failed(request, exc) from exc
    result = served.result
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    if body.stream:
        def events() -> Any:
            base = {"id": cid, "object": "chat.completion.chunk", "created": created,
                    "model": body.model}
            first = {**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                 "content": result.answer},
                                          "finish_reason": None}]}
            last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            yield f"data: {json.dumps(first)}\n\n"
            yield f"data: {json.dumps(last)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")
    return JSONResponse({
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.answer},
                     "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "total_tokens": result.usage.prompt_tokens + result.usage.completion_tokens,
        },
    })


async def models(request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [
        {"id": ASSISTANT_MODEL_NAME, "object": "model", "owned_by": "makerlab"}
    ]})
