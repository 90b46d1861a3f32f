"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat API from a script (tests only)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.serving import serve_in_thread

# A handler answers (status, JSON payload), or (status, payload, headers); a payload that is a
# str is sent as it is (a body that is not JSON); a float status means "sleep that long first,
# then answer 200 with the payload" (a slow or hanging server).
Handler = Callable[[dict[str, Any]], tuple[Any, ...]]


def completion(content: str | None = None, tool_calls: list[dict] | None = None) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


@contextmanager
def fake_openai_server(handler: Handler) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yields (base_url, received request bodies)."""
    received: list[dict[str, Any]] = []

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        received.append(body)
        answer = handler(body)
        status, payload = answer[0], answer[1]
        headers = answer[2] if len(answer) > 2 else None
        if isinstance(status, float):
            await asyncio.sleep(status)
            status = 200
        if isinstance(payload, str):
            return Response(payload, status_code=status, headers=headers,
                            media_type="application/json")
        return JSONResponse(payload, status_code=status, headers=headers)

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    with serve_in_thread(app) as base:
        yield f"{base}/v1", received
