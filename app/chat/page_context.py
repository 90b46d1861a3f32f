"""The "where the person is" block: the page they are on and the rows they ticked."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from app import catalog
from app.capabilities import PageContext, SelectedRow
from app.db import Database

_TOOL = re.compile(r"^/tools/([a-z0-9-]+)(/curate)?/?\Z")
# Pages where rows can be ticked, with what a row is and the column the page shows. Both are
# staff pages: their rows (a ticket's text, people's names and roles) are for staff only.
_SELECTABLE = {
    "/staff/tickets": ("ticket", "tickets", "title"),
    "/people": ("person", "people", "name"),
}


class PageContextError(ValueError):
    """An unknown page, an unknown machine slug, or a selection the page does not have."""


STAFF_ROLES = ("staff", "super_admin")


async def load_page_context(db: Database, path: str, selection: Sequence[int] = (), *,
                            role: str = "anonymous") -> PageContext:
    """Resolve a page path and selected row ids against the database. Rows of a staff page are
    found only for a staff role; for anyone else an id that exists is answered as one that
    does not, so ids cannot be probed."""
    path = path or "/"
    match = _TOOL.match(path)
    if match:
        machine = await catalog.get_machine(db, match.group(1))
        if machine is None:
            raise PageContextError(f"no machine with slug {match.group(1)!r} (page {path})")
        if selection:
            raise PageContextError(f"page {path} has no rows to select")
        return PageContext(path=path, kind="curate" if match.group(2) else "tool", machine=machine)
    if path in ("/", "/gallery"):
        if selection:
            raise PageContextError(f"page {path} has no rows to select")
        return PageContext(path=path, kind="gallery")
    if path in _SELECTABLE:
        kind, table, _ = _SELECTABLE[path]
        rows = await _rows(db, table, list(selection)) if role in STAFF_ROLES else []
        missing = sorted(set(selection) - {r.id for r in rows})
        if missing:
            raise PageContextError(f"no {kind} with id {missing} on page {path}")
        return PageContext(path=path, kind=table, selection=tuple(rows))
    raise PageContextError(f"unknown page {path!r}")


async def _rows(db: Database, table: str, ids: list[int]) -> list[SelectedRow]:
    if not ids:
        return []
    if table == "tickets":
        found = await db.fetch(
            "SELECT t.id, t.title, t.status, t.body, m.name AS machine FROM tickets t"
            " JOIN machines m ON m.id = t.machine_id WHERE t.id = ANY(%s) ORDER BY t.id",
            (ids,),
        )
        return [SelectedRow("ticket", r["id"], r["title"], r) for r in found]
    found = await db.fetch(
        "SELECT id, name, role, title FROM people WHERE id = ANY(%s) ORDER BY id", (ids,)
    )
    return [SelectedRow("person", r["id"], r["name"], r) for r in found]


async def selection_ids_by_name(db: Database, path: str, names: Sequence[str]) -> list[int]:
    """Row ids for the names a page shows (a ticket's title, a person's name)."""
    if path not in _SELECTABLE:
        raise PageContextError(f"page {path!r} has no rows to select")
    _, table, column = _SELECTABLE[path]
    ids = []
    for name in names:
        row = await db.fetchone(
            f"SELECT id FROM {table} WHERE lower({column}) = lower(%s) ORDER BY id LIMIT 1",
            (name,),
        )
        if row is None:
            raise PageContextError(f"page {path} shows no row named {name!r}")
        ids.append(row["id"])
    return ids


def where_block(page: PageContext) -> str:
    """The prompt section that tells the model where the person is."""
    lines = ["## Where the person is"]
    if page.kind == "gallery":
        lines.append(f"Page: the machine gallery ({page.path}).")
    elif page.machine is not None:
        verb = "curating the record of" if page.curating else "on the tool page of"
        lines.append(f"Page: {verb} {page.machine['name']} ({page.path}).")
        lines.append("When they say 'this machine' or 'this printer' they mean this one.")
        lines.append("Its catalogue record: " + json.dumps(page.machine, ensure_ascii=False))
    elif page.kind == "tickets":
        lines.append(f"Page: the maintenance queue ({page.path}).")
    elif page.kind == "people":
        lines.append(f"Page: the people list ({page.path}).")
    if page.selection:
        lines.append("Rows they selected (when they say 'this' or 'these' they mean these):")
        for row in page.selection:
            if row.kind == "ticket":
                d = row.detail
                lines.append(
                    f"- ticket #{row.id} “{row.label}” ({d['machine']}, {d['status']})"
                )
            else:
                lines.append(f"- person #{row.id} {row.label} ({row.detail['role']})")
    return "\n".join(lines)
