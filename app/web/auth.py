"""Sign-in with the university's OpenID Connect provider; roles from the lab's staff list.

Whoever signs in is a student unless the staff list (STAFF_LIST, a YAML file) names their
e-mail address under `staff` or `super_admin`:

    staff:
      - sam.maker@university.example
    super_admin:
      - director@university.example

The role is looked up in the list on every request (the file is re-read when it changes), so
removing someone from it takes effect at once, not at their next sign-in. The provider's
address is OIDC_ISSUER (its /.well-known/openid-configuration is read), the client's
OIDC_CLIENT_ID and OIDC_CLIENT_SECRET. The callback is /auth/callback on this server
(at PUBLIC_URL when that is set). The code is proved with PKCE (S256).

Addresses are compared in one form: NFKC, then case-folded. An address the provider sends
that the form would change beyond its case (U+212A KELVIN SIGN, which `str.lower()` turns
into a plain k, a ligature, a long s, a German sharp s) is refused: it would otherwise take
the role, and the account, of the address it folds into.

The session cookie is SameSite=strict, so it does not come back with the provider's
redirect from another site. The sign-in's own state (authlib's CSRF state, nonce and PKCE
verifier, and the anonymous session the person starts from) goes in a signed cookie of its
own instead, SameSite=lax, sent only to /auth/callback and lasting ten minutes.
"""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path
from typing import Any

import psycopg
import yaml
from authlib.integrations.starlette_client import OAuth, OAuthError
from itsdangerous import BadData, URLSafeTimedSerializer
from joserfc.errors import JoseError
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from app.db import Database
from app.identity import Identity, Role, identity_from_row
from app.redact import redact
from app.settings import Settings
from app.web.errors import ClientError, request_id
from app.web.sessions import end_session, start_session

log = logging.getLogger("app.web")
PROVIDER = "university"
LISTED_ROLES: tuple[Role, ...] = ("staff", "super_admin")
SIGN_IN_COOKIE = "sign_in"
SIGN_IN_PATH = "/auth/callback"
SIGN_IN_MAX_AGE_S = 600
_STATE_PREFIX = f"_state_{PROVIDER}_"


class AddressError(ValueError):
    """An e-mail address that folds into another one."""


def normal_address(email: str) -> str:
    """`email` in the one form addresses are compared in (NFKC, then case-folded). An
    address that NFKC changes, or whose case-folded form is not simply its lower case, is
    refused (AddressError): the difference is a character that looks like, or folds into,
    another address's."""
    plain = email.strip()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", plain).casefold())
    if folded != plain.lower() or unicodedata.normalize("NFKC", plain) != plain:
        raise AddressError(f"{ascii(plain)} changes under NFKC case-folding (to"
                           f" {ascii(folded)})")
    return folded


class StaffListError(ValueError):
    """A staff list that cannot be read: the file and what is wrong with it."""


_cache: dict[Path, tuple[float, dict[str, Role]]] = {}


def staff_roles(path: Path) -> dict[str, Role]:
    """The staff list, read again only when the file changed."""
    try:
        changed = path.stat().st_mtime
    except OSError as exc:
        raise StaffListError(f"{path}: cannot read the staff list: {exc.strerror}") from exc
    cached = _cache.get(path)
    if cached is None or cached[0] != changed:
        _cache[path] = (changed, load_staff_list(path))
    return _cache[path][1]


def role_of(settings: Settings, email: str) -> Role:
    """The role the staff list gives `email` (already in its normal form), else student."""
    roles = staff_roles(settings.staff_list) if settings.staff_list else {}
    return roles.get(email, "student")


def load_staff_list(path: Path) -> dict[str, Role]:
    """E-mail address (normal form, `normal_address`) → role, for the people the list
    names."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data = {} if data is None else data
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise StaffListError(f"{path}: cannot read the staff list: {exc}") from exc
    if not isinstance(data, dict):
        raise StaffListError(f"{path}: expected a mapping with keys {', '.join(LISTED_ROLES)}")
    unknown = sorted(set(map(str, data)) - set(LISTED_ROLES))
    if unknown:
        raise StaffListError(f"{path}: unknown role {unknown[0]!r}; expected one of"
                             f" {', '.join(LISTED_ROLES)}")
    roles: dict[str, Role] = {}
    for role in LISTED_ROLES:  # super_admin last: it wins over staff
        emails = data.get(role) or []
        if not isinstance(emails, list) or not all(isinstance(e, str) and "@" in e
                                                   for e in emails):
            raise StaffListError(f"{path}: {role} must be a list of e-mail addresses")
        for email in emails:
            try:
                roles[normal_address(email)] = role
            except AddressError as exc:
                raise StaffListError(f"{path}: {role}: {exc}") from exc
    return roles


def oidc_client(settings: Settings) -> OAuth | None:
    """The provider's client; a misconfiguration (a broken staff list, the demo sign-in beside
    the real one) stops the app at start, not at the first sign-in."""
    if settings.staff_list:
        staff_roles(settings.staff_list)  # read now: the first sign-in finds it cached
    if not settings.oidc_issuer:
        return None
    if not settings.oidc_client_id or settings.oidc_client_secret is None:
        raise ValueError("OIDC_ISSUER is set: set OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too")
    if settings.demo_signin:
        raise ValueError("DEMO_SIGNIN=1 lets anyone pick any role: it cannot be on beside the"
                         " university's sign-in (OIDC_ISSUER)")
    oauth = OAuth()
    oauth.register(
        PROVIDER,
        server_metadata_url=settings.oidc_issuer.rstrip("/")
        + "/.well-known/openid-configuration",
        client_id=settings.oidc_client_id,
        client_secret=settings.oidc_client_secret.get_secret_value(),
        client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256"},
    )
    return oauth


def _client(request: Request) -> Any:
    oauth: OAuth | None = request.app.state.oidc
    if oauth is None:
        raise ClientError(404, "sign-in is not configured on this server (OIDC_ISSUER)")
    return oauth.create_client(PROVIDER)


def _signer(request: Request) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(request.app.state.secret, salt="sign-in")


def _callback_url(request: Request) -> str:
    settings: Settings = request.app.state.settings
    if settings.public_url:
        return settings.public_url + SIGN_IN_PATH
    return str(request.url_for("auth_callback"))


async def login(request: Request) -> Response:
    client = _client(request)
    response: Response = await client.authorize_redirect(request, _callback_url(request))
    # authlib kept the sign-in's state in the session; it moves to the sign-in cookie, the
    # one that comes back with the provider's redirect.
    flow = {k: request.session.pop(k) for k in list(request.session)
            if k.startswith(_STATE_PREFIX)}
    flow["anon"] = request.session.get("anon")
    response.set_cookie(SIGN_IN_COOKIE, _signer(request).dumps(flow), max_age=SIGN_IN_MAX_AGE_S,
                        path=SIGN_IN_PATH, httponly=True, samesite="lax",
                        secure=request.app.state.settings.secure_cookies)
    return response


def _flow(request: Request) -> dict[str, Any]:
    """The sign-in's state from its cookie ({} when missing, altered or too old)."""
    try:
        flow = _signer(request).loads(request.cookies.get(SIGN_IN_COOKIE, ""),
                                      max_age=SIGN_IN_MAX_AGE_S)
    except BadData:
        return {}
    return flow if isinstance(flow, dict) else {}


def _sign_in_failed(request: Request, exc: Exception,
                    message: str = "sign-in failed; please try again") -> ClientError:
    # One line, no traceback: anyone can send a made-up callback.
    log.warning("request %s: sign-in failed: %s: %s", request_id(request),
                type(exc).__name__, redact(str(exc)))
    return ClientError(400, message)


async def callback(request: Request) -> Response:
    client = _client(request)
    flow = _flow(request)
    anon = flow.pop("anon", None)
    request.session.update({k: v for k, v in flow.items() if k.startswith(_STATE_PREFIX)})
    try:
        token = await client.authorize_access_token(request)
    except (OAuthError, JoseError) as exc:  # joserfc's token errors are not OAuthError
        raise _sign_in_failed(request, exc) from None
    claims = token.get("userinfo") or {}
    settings: Settings = request.app.state.settings
    sent = str(claims.get("email") or "")
    verified = claims.get("email_verified") is True or settings.oidc_email_verified
    if not claims.get("sub") or not claims.get("iss") or not sent.strip() or not verified:
        raise ClientError(403, "the university did not confirm an e-mail address for you")
    try:
        email = normal_address(sent)
    except AddressError as exc:
        raise _sign_in_failed(request, exc, "sign-in refused: your e-mail address has a"
                              " character that reads as another one here (a compatibility"
                              " or case-folding form); ask the lab's staff") from None
    try:
        role = role_of(settings, email)
    except StaffListError as exc:
        log.error("request %s: %s", request_id(request), exc)
        raise ClientError(503, "sign-in is unavailable (the lab's staff list cannot be read);"
                               f" request id {request_id(request)}") from exc
    try:
        person = await sign_in_person(request.app.state.db,
                                      subject=f"{claims['iss']}|{claims['sub']}", email=email,
                                      name=str(claims.get("name") or email), role=role)
    except psycopg.errors.UniqueViolation as exc:
        log.warning("request %s: %s is linked to another account", request_id(request), email)
        raise ClientError(409, "this e-mail address belongs to another account here; ask the"
                               " lab's staff to link it") from exc
    await start_session(request, person.person_id, demo=False,
                        anon=str(anon) if isinstance(anon, str) else None)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SIGN_IN_COOKIE, path=SIGN_IN_PATH)
    return response


async def sign_in_person(db: Database, *, subject: str, email: str, name: str, role: Role
                         ) -> Identity:
    """The person this provider account is (made on first sign-in), with today's role."""
    row = await db.fetchone(
        "INSERT INTO people (handle, name, role, email, oidc_subject)"
        " VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (oidc_subject) DO UPDATE"
        " SET name = EXCLUDED.name, role = EXCLUDED.role, email = EXCLUDED.email"
        " RETURNING *", (email, name, role, email, subject))
    assert row is not None
    return identity_from_row(row)


async def logout(request: Request) -> JSONResponse:
    await end_session(request)
    request.session.clear()
    return JSONResponse({"signed_in": None})
