"""POST /v1/chat/completions: the assistant behind an OpenAI-compatible endpoint.

Callers are anonymous visitors on the gallery page. A caller's own system messages are
ignored: the system prompt is always the one compose_chat builds on the server.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from app.chat.models import ModelCallError
from app.conversations import user_ref
from app.web.errors import ClientError
from app.web.requests import decode_photo, read_json
from app.web.turns import serve_turn

ASSISTANT_MODEL_NAME = "makerlab-assistant"


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class CompletionIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # OpenAI clients send many optional fields
    model: str = ASSISTANT_MODEL_NAME
    messages: list[MessageIn] = Field(min_length=1, max_length=200)
    stream: bool = False


def _split(content: str | list[dict[str, Any]] | None, max_bytes: int) -> tuple[str, list]:
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts, photos = [], []
    for i, part in enumerate(content):
        if part.get("type") == "text":
            texts.append(str(part.get("text", "")))
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            if not str(url).startswith("data:"):
                raise ClientError(400, f"image part {i}: only data: URLs are accepted")
            photos.append(decode_photo(f"image-{i + 1}", url, max_bytes=max_bytes))
        else:
            raise ClientError(400, f"content part {i}: unsupported type {part.get('type')!r}")
    return "\n".join(texts), photos


async def completions(request: Request) -> Response:
    body = await read_json(request, CompletionIn)
    state = request.app.state
    convo = [m for m in body.messages if m.role in ("user", "assistant")]
    if not convo or convo[-1].role != "user":
        raise ClientError(400, "messages must end with a user message")
    history = []
    for m in convo[:-1]:
        text, _ = _split(m.content, state.settings.max_photo_bytes)
        history.append({"role": m.role, "content": text})
    text, photos = _split(convo[-1].content, state.settings.max_photo_bytes)
    if not text.strip():
        raise ClientError(400, "the last user message has no text")
    try:
        served = await serve_turn(
            db=state.db, settings=state.settings, model=state.chat_model(), identity=None,
            ref=user_ref(state.secret, "openai-endpoint"), text=text, history=history,
            photos=tuple(photos), manuals=state.manuals,
        )
    except ModelCallError as exc:
        raise ClientError(502, f"the model call failed: {exc}") from exc
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
