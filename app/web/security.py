"""What every request and response passes through: a request id, a cross-site check on
state-changing requests, security headers, and the last word on an unexpected error (a
generic 500 with the request id; the traceback, redacted, to the log, and not re-raised to
the server, which would log it unredacted).

The cross-site check is the Origin check (with Sec-Fetch-Site for browsers that send no
Origin). The session cookie is SameSite=strict, so a browser sends it with no request
another site starts (the way back from the university's sign-in page has a cookie of its
own, see auth.py), and the Origin check refuses another site's POST in any case.
"""

from __future__ import annotations

import secrets

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web.errors import server_error

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Pages load their script and style from /static; nothing inline, nothing from elsewhere.
CSP = ("default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'")
HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


def _own_origin(scope: Scope, headers: Headers) -> str:
    return f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"


class SecurityMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = secrets.token_hex(8)
        scope.setdefault("state", {})["request_id"] = rid
        headers = Headers(scope=scope)

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                out = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    out.setdefault(name, value)
                out["x-request-id"] = rid
                if out.get("content-type", "").startswith("text/html"):
                    out.setdefault("content-security-policy", CSP)
            await send(message)

        if scope["method"] not in SAFE_METHODS and self._cross_site(scope, headers):
            response = JSONResponse({"error": "cross-site request refused"}, status_code=403)
            await response(scope, receive, send_with_headers)
            return
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            response = server_error(Request(scope), exc)
            if not started:  # else the answer is already under way: the server closes it
                await response(scope, receive, send_with_headers)

    @staticmethod
    def _cross_site(scope: Scope, headers: Headers) -> bool:
        origin = headers.get("origin")
        if origin is not None:
            return origin != _own_origin(scope, headers)
        # No Origin: a non-browser client (curl, an SDK), unless the browser says otherwise.
        return headers.get("sec-fetch-site") == "cross-site"
