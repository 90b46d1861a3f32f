"""HTML pages: the chat page (gallery) and a tool's page, both with the chat panel."""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse

from app import catalog

STATIC = Path(__file__).parent / "static"


@lru_cache(maxsize=1)
def _template() -> str:
    return (STATIC / "chat.html").read_text()


def render(page_path: str, panel_html: str) -> str:
    return (_template().replace("__PAGE_PATH__", html.escape(page_path, quote=True))
            .replace("__PANEL__", panel_html))


async def gallery(request: Request) -> HTMLResponse:
    machines = await catalog.list_machines(request.app.state.db)
    items = "".join(
        f'<li><a href="/tools/{html.escape(m["slug"])}">{html.escape(m["name"])}</a>'
        f' — {html.escape(m["category"])}</li>'
        for m in machines
    )
    return HTMLResponse(render("/", f'<div class="panel"><h2>Machines</h2><ul>{items}</ul></div>'))


async def tool_page(request: Request) -> HTMLResponse:
    slug = request.path_params["slug"]
    machine = await catalog.get_machine(request.app.state.db, slug)
    if machine is None:
        return HTMLResponse(f"<h1>No machine {html.escape(slug)!s}</h1>", status_code=404)
    specs = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v) if v else '<em>not recorded</em>'}"
        "</td></tr>"
        for k, v in machine["specs"].items()
    )
    panel = (
        f'<div class="panel"><h2>{html.escape(machine["name"])}</h2>'
        f'<p>{html.escape(machine["summary"])}</p><table>{specs}</table></div>'
    )
    return HTMLResponse(render(f"/tools/{slug}", panel))
