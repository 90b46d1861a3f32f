"""Client errors: a clear message and a 4xx, raised anywhere in a request."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse


class ClientError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(body)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


async def client_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ClientError)
    if request.url.path.startswith("/v1/"):
        kind = "invalid_request_error" if exc.status < 500 else "api_error"
        body = {"error": {"message": exc.message, "type": kind}}
        return JSONResponse(body, status_code=exc.status)
    return JSONResponse({"error": exc.message}, status_code=exc.status)
