"""Who a request's cookie signs in: the cookie holds a random session id; the session row
says whose it is. Signing out deletes the row, so a copied cookie stops working too; a demo
session counts only while the demo sign-in is on; a session lasts SESSION_MAX_AGE_S.

The cookie is signed with SESSION_SECRET, which also keys the pseudonymous references that
conversations and consent are kept under. Without it, a secret is made once in the data
folder and kept: a secret drawn anew at every start would give everyone a new reference
after a restart, and a "no" recorded under the new one would not reach the conversations
kept under the old one.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import tempfile
from pathlib import Path

from starlette.requests import Request

from app.conversations import link_ref, user_ref
from app.db import Database
from app.settings import Settings

SECRET_FILE = "session-secret"
_SECRET_TEXT = re.compile(r"[0-9a-f]{64}")


class SessionSecretError(ValueError):
    """The data folder's session secret cannot be used: the file and what is wrong."""


def session_secret(settings: Settings) -> bytes:
    """SESSION_SECRET, else the data folder's own secret (made on the first start)."""
    if settings.session_secret is not None:
        return settings.session_secret.get_secret_value().encode()
    return persistent_secret(settings.data_dir / SECRET_FILE)


def persistent_secret(path: Path) -> bytes:
    """The secret kept in `path`, made if there is none. It is written in full to a private
    temporary file (mode 0600) and then hard-linked into place, which fails if the name
    exists: of two processes starting at once, one links first and the other reads that
    file, so both use the same secret and neither reads half of one."""
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32) + "\n")
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process made it first: theirs is the secret
        finally:
            os.unlink(temporary)
    except OSError as exc:
        raise SessionSecretError(f"{path}: cannot make the session secret: {exc.strerror};"
                                 " make the data folder writable or set SESSION_SECRET"
                                 ) from exc
    return _read_secret(path)


def _read_secret(path: Path) -> bytes:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SessionSecretError(f"{path}: cannot read the session secret: {exc.strerror}"
                                 ) from exc
    if stat.S_IMODE(mode) & 0o077:
        raise SessionSecretError(f"{path}: the session secret is readable by others (mode"
                                 f" {stat.S_IMODE(mode):o}); make it private: chmod 600 {path}")
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError as exc:
        raise SessionSecretError(f"{path}: cannot read the session secret: {exc.strerror}"
                                 ) from exc
    if not _SECRET_TEXT.fullmatch(text):
        raise SessionSecretError(
            f"{path}: not a session secret (64 hexadecimal digits expected); restore it, or"
            " remove it to make a new one (that signs everyone out, and anonymous visitors"
            " can no longer change the consent they gave)")
    return bytes.fromhex(text)


def person_ref(secret: bytes, person_id: int) -> str:
    """The reference a signed-in person's conversations are kept under."""
    return user_ref(secret, f"person:{person_id}")


def anonymous_ref(secret: bytes, anon: str) -> str:
    """The reference an anonymous session's conversations are kept under."""
    return user_ref(secret, f"anon:{anon}")


async def start_session(request: Request, person_id: int, *, demo: bool,
                        anon: str | None = None) -> None:
    """Sign `person_id` in. The anonymous session they signed in from (`anon`, else the one
    in the cookie) is linked to them: their no withdraws its conversations, but their yes
    never reaches them (on a shared browser they may not be its visitor)."""
    anon = anon or request.session.get("anon")
    await end_session(request)
    sid = secrets.token_urlsafe(24)
    db: Database = request.app.state.db
    secret: bytes = request.app.state.secret
    await db.execute("INSERT INTO sessions (id, person_id, demo) VALUES (%s, %s, %s)",
                     (sid, person_id, demo))
    await link_ref(db, person_ref(secret, person_id), person_id)
    if anon:
        await link_ref(db, anonymous_ref(secret, str(anon)), person_id)
    request.session.clear()
    request.session["sid"] = sid


async def end_session(request: Request) -> None:
    sid = request.session.pop("sid", None)
    if sid is not None:
        await request.app.state.db.execute("DELETE FROM sessions WHERE id = %s", (str(sid),))


async def session_person(request: Request) -> int | None:
    """The signed-in person's id, or None (no session, ended, expired, or a demo session
    while the demo sign-in is off)."""
    sid = request.session.get("sid")
    if sid is None:
        return None
    settings = request.app.state.settings
    row = await request.app.state.db.fetchone(
        "SELECT person_id, demo FROM sessions WHERE id = %s"
        " AND created_at > now() - make_interval(secs => %s)",
        (str(sid), settings.session_max_age_s))
    if row is None or (row["demo"] and not settings.demo_signin):
        return None
    return int(row["person_id"])
