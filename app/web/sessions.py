"""Who a request's cookie signs in: the cookie holds a random session id; the session row
says whose it is. Signing out deletes the row, so a copied cookie stops working too; a demo
session counts only while the demo sign-in is on; a session lasts SESSION_MAX_AGE_S."""

from __future__ import annotations

import secrets

from starlette.requests import Request

from app.db import Database


async def start_session(request: Request, person_id: int, *, demo: bool) -> None:
    await end_session(request)
    sid = secrets.token_urlsafe(24)
    db: Database = request.app.state.db
    await db.execute("INSERT INTO sessions (id, person_id, demo) VALUES (%s, %s, %s)",
                     (sid, person_id, demo))
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
