"""Reading request bodies and photos: bounded, validated, clear errors.

Every limit is enforced before the work it bounds: the body's size from Content-Length and
again while it streams, JSON nesting before the document is used, a photo's pixels from its
header before it is decoded. Both chat routes validate a turn with one model, TurnIn.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import json
import re
from typing import Annotated, Any, Literal, TypeVar

from PIL import Image
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from app.capabilities import Photo
from app.settings import Settings
from app.text import control_named
from app.web.errors import ClientError, validation_message

M = TypeVar("M", bound=BaseModel)
IMAGE_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
MAX_JSON_DEPTH = 32
MAX_JSON_CONTAINERS = 20_000
MAX_JSON_VALUES = 100_000
# NUL, the C0/C1 controls other than tab, newline and carriage return, and lone surrogates
# (JSON can carry "\ud800"; no text can be stored with one).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def plain_text(value: str) -> str:
    """Text a person typed: NUL and control characters are refused, not stored."""
    if (m := _CONTROL.search(value)) is not None:
        raise ValueError(f"contains the {control_named(m.group())}")
    return value


PlainText = Annotated[str, AfterValidator(plain_text)]


class PhotoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: PlainText = Field(min_length=1, max_length=200)
    data: str = Field(description="base64 bytes or a data: URL")


class HistoryTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: PlainText


class TurnIn(BaseModel):
    """One turn as either chat route receives it."""

    model_config = ConfigDict(extra="forbid")
    message: PlainText
    history: list[HistoryTurn] = Field(default=[], max_length=200)
    photos: list[PhotoIn] = []


def turn_input(settings: Settings, data: dict[str, Any]) -> TurnIn:
    """A turn validated and held to the settings' limits, the same for both chat routes."""
    try:
        turn = TurnIn.model_validate(data)
    except ValidationError as exc:
        raise ClientError(400, validation_message(exc)) from exc
    if not turn.message.strip():
        raise ClientError(400, "message: the message has no text")
    longest = settings.max_message_chars
    if len(turn.message) > longest:
        raise ClientError(413, f"message: longer than {longest} characters")
    for n, earlier in enumerate(turn.history):
        if len(earlier.content) > longest:
            raise ClientError(413, f"history.{n}: longer than {longest} characters")
    if len(turn.photos) > settings.max_photos:
        raise ClientError(413, f"photos: at most {settings.max_photos} photos per message")
    return turn


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused as soon as it is known to be larger than `limit`: from its
    Content-Length before reading, else while it streams."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ClientError(413, f"body is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ClientError(413, f"body is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _depth(data: Any) -> int:
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict)
                                                   else item))
    return deepest


async def read_json(request: Request, model: type[M], *, limit: int) -> M:
    if media_type(request) != "application/json":
        raise ClientError(415, "send the body as application/json")
    body = await read_body(request, limit)
    # Every list and object costs memory and time to build; a chat body has a few dozen. Counted
    # in the raw bytes (brackets inside strings count too: a bound, not an exact count).
    if body.count(b"[") + body.count(b"{") > MAX_JSON_CONTAINERS:
        raise ClientError(400, f"body has more than {MAX_JSON_CONTAINERS} lists and objects")
    if body.count(b",") + body.count(b":") > MAX_JSON_VALUES:
        raise ClientError(400, f"body has more than {MAX_JSON_VALUES} values")
    return await asyncio.to_thread(_parse, body, model)


def _parse(body: bytes, model: type[M]) -> M:
    """Parse and validate off the event loop (a big body takes a while)."""
    try:
        data: Any = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ClientError(400, f"body is not valid JSON: {exc}") from exc
    except RecursionError:
        raise ClientError(400, f"body is nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise ClientError(400, f"body is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ClientError(400, validation_message(exc)) from exc


def decode_photo(name: str, b64: str, *, max_bytes: int, max_pixels: int) -> Photo:
    """A photo from base64 (optionally a data: URL), checked to really be an image of at most
    `max_pixels` (read from its header: nothing is decoded)."""
    if b64.startswith("data:"):
        b64 = b64.partition(",")[2]
    # Reject before decoding what would decode to more than the limit.
    if len(b64) * 3 // 4 > max_bytes + 3:
        raise ClientError(413, f"photo {name!r} is larger than {max_bytes} bytes")
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ClientError(400, f"photo {name!r} is not valid base64") from exc
    if len(data) > max_bytes:
        raise ClientError(413, f"photo {name!r} is larger than {max_bytes} bytes")
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if width * height > max_pixels:
                raise ClientError(413, f"photo {name!r} is {width} × {height} pixels; at most"
                                       f" {max_pixels} pixels")
            image.verify()
            kind = image.format or ""
    except (OSError, Image.DecompressionBombError, SyntaxError) as exc:
        raise ClientError(415, f"photo {name!r} is not an image") from exc
    if kind not in IMAGE_TYPES:
        raise ClientError(415, f"photo {name!r} is {kind}; send JPEG, PNG, WebP or GIF")
    return Photo(name=name, content_type=IMAGE_TYPES[kind], data=data)


def decode_photos(settings: Settings, photos: list[PhotoIn]) -> tuple[Photo, ...]:
    return tuple(decode_photo(p.name, p.data, max_bytes=settings.max_photo_bytes,
                              max_pixels=settings.max_photo_pixels) for p in photos)
