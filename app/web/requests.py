"""Reading request bodies and photos: validated, size-limited, clear errors."""

from __future__ import annotations

import base64
import binascii
import io
import json
from typing import Any, TypeVar

from PIL import Image
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from app.chat.context import Photo
from app.web.errors import ClientError, validation_message

M = TypeVar("M", bound=BaseModel)
MAX_BODY_BYTES = 64 * 1024 * 1024
IMAGE_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


async def read_json(request: Request, model: type[M]) -> M:
    if "application/json" not in request.headers.get("content-type", ""):
        raise ClientError(415, "send the body as application/json")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise ClientError(413, f"body is larger than {MAX_BODY_BYTES} bytes")
    try:
        data: Any = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ClientError(400, f"body is not valid JSON: {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ClientError(400, validation_message(exc)) from exc


def decode_photo(name: str, b64: str, *, max_bytes: int) -> Photo:
    """A photo from base64 (optionally a data: URL), checked to really be an image."""
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
            image.verify()
            kind = image.format or ""
    except (OSError, Image.DecompressionBombError, SyntaxError) as exc:
        raise ClientError(415, f"photo {name!r} is not an image") from exc
    if kind not in IMAGE_TYPES:
        raise ClientError(415, f"photo {name!r} is {kind}; send JPEG, PNG, WebP or GIF")
    return Photo(name=name, content_type=IMAGE_TYPES[kind], data=data)
