"""Errors as callers see them: a clear message for their own mistakes (4xx); for anything else
a generic message and a request id, the details in the server log with secrets redacted."""

from __future__ import annotations

import logging
import traceback

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from app.redact import redact

log = logging.getLogger("app.web")


class ClientError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


MAX_SHOWN_ERRORS = 5


def validation_message(exc: ValidationError) -> str:
    """The first few problems, each naming its field (a body with a million bad items gets a
    short answer, not a million lines)."""
    errors = exc.errors()
    parts = []
    for err in errors[:MAX_SHOWN_ERRORS]:
        where = ".".join(str(p) for p in err["loc"]) or "(body)"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    if len(errors) > MAX_SHOWN_ERRORS:
        parts.append(f"and {len(errors) - MAX_SHOWN_ERRORS} more")
    return "; ".join(parts)


def request_id(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", "-"))


def model_call_failed(request: Request, exc: Exception) -> ClientError:
    """A failed model call: the provider's text (which may echo a key) goes to the log only."""
    rid = request_id(request)
    log.warning("request %s: the model call failed: %s", rid, redact(str(exc)))
    return ClientError(502, f"the assistant's model could not answer; request id {rid}")


def _body(request: Request, status: int, message: str) -> dict[str, object]:
    if request.url.path.startswith("/v1/"):
        kind = "invalid_request_error" if status < 500 else "api_error"
        return {"error": {"message": message, "type": kind}}
    return {"error": message}


async def client_error_handler(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ClientError)
    return JSONResponse(_body(request, exc.status, exc.message), status_code=exc.status)


def server_error(request: Request, exc: Exception) -> JSONResponse:
    rid = request_id(request)
    detail = "".join(traceback.format_exception(exc))
    log.error("request %s: %s %s failed:\n%s", rid, request.method, request.url.path,
              redact(detail))
    return JSONResponse(_body(request, 500, f"something went wrong; request id {rid}"),
                        status_code=500)
