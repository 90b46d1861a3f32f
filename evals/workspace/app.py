"""The eval workspace: run, read and author evals in the browser.

`python -m evals workspace` serves it on 127.0.0.1 (port WORKSPACE_PORT, default 8010) and
prints a one-time address with a token; opening it sets a session cookie (the token then stops
working), and every request needs that cookie, so another local site or user can neither read
nor drive it. A form posted from anywhere but the workspace's own pages is refused (the
cookie is SameSite=strict, and the Origin must be the workspace's). Cookies are not bound to
a port: a browser sends this one to any server on 127.0.0.1 it visits, so do not browse
local servers you do not trust in that browser while the workspace runs.

Tabs: Overview (start a run or a comparison), Results (progress, the run picker, pass rates
per file, comparisons, a run's evidence), Tests (cases, scenarios, criteria, frozen tool
responses, groups; every save is all-or-nothing and shows its diff) and Labels (people's
verdicts on the judge's, the judge's hidden until answered; evals/workspace/labels.py).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Route

from app.text import CONTROL
from evals.record.store import RunStore
from evals.workspace.frozen import ResponsesTab
from evals.workspace.groups import GroupsTab
from evals.workspace.labels import LabelsTab
from evals.workspace.launch import Launcher
from evals.workspace.layout import HEADERS, page
from evals.workspace.matrix_tab import MatrixTab
from evals.workspace.online_tab import OnlineTab
from evals.workspace.overview import OverviewTab
from evals.workspace.results import ResultsTab
from evals.workspace.sources import Sources
from evals.workspace.tests_tab import TestsTab

COOKIE = "workspace"
SCRIPT = Path(__file__).parent / "workspace.js"
MAX_BODY = 2_000_000
DIGITS = re.compile(r"[0-9]{1,12}")
# Not in a path (every one is a name or an id); a query value (a search, a name) may hold a
# tab as a file or a label may, but no other control character (a NUL no store can hold).
ADDRESS_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def create_workspace(conninfo: str, token: str, *, sources: Sources | None = None,
                     launcher: Launcher | None = None) -> Starlette:
    session = secrets.token_urlsafe(24)
    used: list[bool] = []  # the token opens the workspace once
    launcher = launcher or Launcher()
    sources = sources or Sources()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with RunStore.open(conninfo) as store:
            app.state.store = store
            try:
                yield
            finally:
                await launcher.close()

    def same(given: str, secret: str) -> bool:
        return secrets.compare_digest(given.encode(), secret.encode())

    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]
                    ) -> Response:
        given = request.query_params.get("token")
        if request.url.path == "/" and given is not None:
            if used or not same(given, token):
                return page("overview", "Not allowed", "<p>That token is not this"
                            " workspace's, or it has been used.</p>", status=403)
            used.append(True)
            response = RedirectResponse("/", status_code=303, headers=HEADERS)
            response.set_cookie(COOKIE, session, httponly=True, samesite="strict")
            return response
        if not same(request.cookies.get(COOKIE, ""), session):
            return page("overview", "Not allowed", "<p>Open the address that <code>python -m"
                        " evals workspace</code> printed.</p>", status=403)
        if ADDRESS_CONTROL.search(request.url.path) or any(
                CONTROL.search(k) or CONTROL.search(v)
                for k, v in request.query_params.multi_items()):
            return page("overview", "Bad address", "<p>The address holds a control"
                        " character: no name or id here has one.</p>", status=400)
        if request.method not in ("GET", "HEAD"):
            # A form is taken only from the workspace's own pages: its Origin, or (a browser
            # that sends no Origin) Sec-Fetch-Site. Other servers on 127.0.0.1 are the same
            # *site* (the cookie goes there too) but never the same *origin*.
            origin = request.headers.get("origin")
            own = f"{request.url.scheme}://{request.url.netloc}"
            site = request.headers.get("sec-fetch-site")
            if origin != own and not (origin is None and site in (None, "same-origin")):
                return page("overview", "Not allowed", "<p>A form from another site.</p>",
                            status=403)
            # Only a body of a stated length is read (a chunked one could be any size).
            length = request.headers.get("content-length")
            if length is None:
                return page("overview", "Length required", "<p>A form is sent with its"
                            " length.</p>", status=411)
            if not DIGITS.fullmatch(length) or int(length) > MAX_BODY:
                return page("overview", "Too large", "<p>That form is too large.</p>",
                            status=413)
        return await call_next(request)

    async def script(request: Request) -> Response:
        return FileResponse(SCRIPT, media_type="text/javascript", headers=HEADERS)

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204, headers=HEADERS)

    routes = [*OverviewTab(launcher, sources).routes(), *ResultsTab(launcher).routes(),
              *MatrixTab().routes(), *OnlineTab(conninfo).routes(), *TestsTab(sources).routes(),
              *ResponsesTab(sources).routes(),
              *GroupsTab(sources).routes(),
              *LabelsTab(sources).routes(),
              Route("/static/workspace.js", script),
              Route("/favicon.ico", no_icon)]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[
        # the Host header builds the own origin and the progress page's address: only ours
        Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
        Middleware(BaseHTTPMiddleware, dispatch=guard)])
