"""The eval workspace, read-only so far: stored runs and their evidence in the browser.

`python -m evals workspace` serves it on 127.0.0.1 (port WORKSPACE_PORT, default 8010) and
prints a one-time address with a token; opening it sets a session cookie (the token then
stops working), and every request needs that cookie, so another local site or user cannot read
the runs. Cookies are not bound to a port: a browser sends this one to any server on
127.0.0.1 it visits, so do not browse other local servers you do not trust in that browser
while the workspace runs. Pages have no script.

- `/`: the run picker (the stored runs, newest first) and the pass rate per file across them.
- `/runs/{id}`: one run's evidence, the same page as `python -m evals report`.
"""

from __future__ import annotations

import html
import secrets
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from evals.html_report import STYLE, render_run
from evals.store import RunStore, StoreError

COOKIE = "workspace"
RUNS_SHOWN = 30
RATE_RUNS = 8  # runs in the pass-rate table
HEADERS = {"content-security-policy": "default-src 'none'; style-src 'unsafe-inline';"
                                      " frame-ancestors 'none'; form-action 'none'",
           "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "cache-control": "no-store"}


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE} table{{border-collapse:collapse;"
        "display:block;overflow-x:auto}} td,th{{padding:4px 8px;border-bottom:1px solid #ddd;"
        "text-align:left;white-space:nowrap}}</style></head><body><header><div class=\"wrap\">"
        f'<h1><a href="/" style="color:#fff">Eval workspace</a> · {_e(title)}</h1></div>'
        f'</header><main class="wrap">{body}</main></body></html>', status_code=status,
        headers=HEADERS)


def create_workspace(conninfo: str, token: str) -> Starlette:
    session = secrets.token_urlsafe(24)
    used: list[bool] = []  # the token opens the workspace once

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with RunStore.open(conninfo) as store:
            app.state.store = store
            yield

    def same(given: str, secret: str) -> bool:
        return secrets.compare_digest(given.encode(), secret.encode())

    def allowed(request: Request) -> bool:
        return same(request.cookies.get(COOKIE, ""), session)

    async def home(request: Request) -> Response:
        given = request.query_params.get("token")
        if given is not None:
            if used or not same(given, token):
                return _page("not allowed", "<p>That token is not this workspace's, or it has"
                                            " been used.</p>", 403)
            used.append(True)
            response = RedirectResponse("/", status_code=303, headers=HEADERS)
            response.set_cookie(COOKIE, session, httponly=True, samesite="strict")
            return response
        if not allowed(request):
            return _refused()
        store: RunStore = request.app.state.store
        rows = await store.list_runs(RUNS_SHOWN)
        return _page("runs", _picker(rows) + await _rates(store, rows[:RATE_RUNS]))

    async def run(request: Request) -> Response:
        if not allowed(request):
            return _refused()
        try:
            record = await request.app.state.store.load_run(request.path_params["run_id"])
        except StoreError as exc:
            return _page("no such run", f"<p>{_e(exc)}</p>", 404)
        return HTMLResponse(render_run(record), headers=HEADERS)

    return Starlette(routes=[Route("/", home), Route("/runs/{run_id}", run)],
                     lifespan=lifespan)


def _refused() -> HTMLResponse:
    return _page("not allowed", "<p>Open the address that <code>python -m evals workspace"
                                "</code> printed.</p>", 403)


def _picker(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>No stored runs yet: <code>python -m evals run</code>.</p>"
    lines = []
    for r in rows:
        t = r["totals"] or {}
        lines.append(
            f'<tr><td><a href="/runs/{_e(r["id"])}">{_e(r["id"])}</a></td>'
            f'<td>{r["started_at"]:%Y-%m-%d %H:%M}</td><td>{_e(r["status"])}</td>'
            f'<td>{_e(r["model"])}</td><td>{t.get("passed", 0)}/{t.get("cases", 0)}</td>'
            f'<td>{_e(r["point"] or "")}</td></tr>')
    return ("<h2>Runs</h2><table><tr><th>run</th><th>started</th><th>status</th>"
            f"<th>model</th><th>passed</th><th>point</th></tr>{''.join(lines)}</table>")


async def _rates(store: RunStore, rows: list[dict[str, Any]]) -> str:
    """Pass rate per file in each of the newest runs (first attempts that passed, of the
    decided ones)."""
    if not rows:
        return ""
    per_file: dict[str, dict[str, str]] = defaultdict(dict)
    for c in await store.file_counts([str(r["id"]) for r in rows]):
        per_file[c["file"]][c["run_id"]] = f"{c['passed'] / c['decided']:.0%}"
    head = "".join(f"<th>{_e(r['id'])}</th>" for r in rows)
    body = "".join(f"<tr><td>{_e(file)}</td>"
                   + "".join(f"<td>{per_file[file].get(str(r['id']), '—')}</td>" for r in rows)
                   + "</tr>" for file in sorted(per_file))
    return (f"<h2>Pass rate per file (newest runs first)</h2><table><tr><th>file</th>{head}"
            f"</tr>{body}</table>")
