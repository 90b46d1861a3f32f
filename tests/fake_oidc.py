"""An OpenID Connect provider on 127.0.0.1 for tests: discovery, authorize, token and keys,
with RS256-signed ID tokens. `provider.user` is who signs in next."""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app.serving import free_port, serve_in_thread

CLIENT_ID = "makerlab"
CLIENT_SECRET = "test-client-secret"


@dataclass
class FakeProvider:
    issuer: str
    user: dict[str, Any] = field(default_factory=dict)
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(
        2048, parameters={"kid": "test-key"}))
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A page with a link the person follows (as at a real provider, where they sign in) instead
    # of sending them straight back: the way back is then a navigation from the provider's site.
    interactive: bool = False
    # Refuse a code whose token request does not prove the PKCE challenge (S256) it was
    # issued under; the methods clients asked for are kept in `challenges`.
    require_pkce: bool = False
    challenges: list[str | None] = field(default_factory=list)
    # Sign the next ID tokens with a key the provider does not publish (a forged token), or
    # send something that is not a JWT at all.
    forge: bool = False
    garbled: bool = False

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            return JSONResponse({
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
            })

        async def authorize(request: Request) -> Response:
            q = request.query_params
            code = secrets.token_urlsafe(12)
            self.codes[code] = {"nonce": q.get("nonce"), "client_id": q["client_id"],
                                "user": dict(self.user),
                                "challenge": q.get("code_challenge")}
            self.challenges.append(q.get("code_challenge_method"))
            sep = "&" if "?" in q["redirect_uri"] else "?"
            back = f"{q['redirect_uri']}{sep}" + urlencode({"code": code, "state": q["state"]})
            if self.interactive:
                return HTMLResponse('<link rel="icon" href="data:,">'
                                    f'<a id="continue" href="{html.escape(back)}">Continue</a>')
            return RedirectResponse(back)

        async def token(request: Request) -> JSONResponse:
            form = await request.form()
            grant = self.codes.pop(str(form.get("code")), None)
            if grant is None:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            if self.require_pkce and grant["challenge"] != _s256(str(form.get("code_verifier"))):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            now = int(time.time())
            claims = {"iss": self.issuer, "aud": grant["client_id"], "iat": now,
                      "exp": now + 300, "nonce": grant["nonce"], **grant["user"]}
            key = RSAKey.generate_key(2048, parameters={"kid": "test-key"}) if self.forge \
                else self.key
            id_token = jwt.encode({"alg": "RS256", "kid": "test-key"}, claims, key)
            if self.garbled:
                id_token = "not.a-token"
            return JSONResponse({"access_token": secrets.token_urlsafe(12),
                                 "token_type": "Bearer", "expires_in": 300,
                                 "id_token": id_token})

        async def jwks(request: Request) -> JSONResponse:
            return JSONResponse({"keys": [self.key.as_dict(private=False)]})

        return Starlette(routes=[
            Route("/.well-known/openid-configuration", discovery),
            Route("/authorize", authorize),
            Route("/token", token, methods=["POST"]),
            Route("/jwks", jwks),
        ])


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@contextmanager
def fake_oidc_provider(name: str = "127.0.0.1") -> Iterator[FakeProvider]:
    """Served on 127.0.0.1; `name` is the host its issuer address uses (localhost makes it
    another site than an app on 127.0.0.1, as a real provider is)."""
    port = free_port()
    provider = FakeProvider(f"http://{name}:{port}")
    with serve_in_thread(provider.app(), port=port):
        yield provider
