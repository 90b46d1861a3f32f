"""The inputs of a request besides what its context tells the model and what its item says: the
photos it attaches, the manuals served to the model (a scanned one attached whole to a turn on
its machine's page, a text one's pages as search_manual's passages), and the catalogue
records, tickets and people that the page and the tools read from the eval's database. One
that changed since the baseline touches the items whose requests may carry it.

The plan keeps a digest of each photo (its fixtures) and of each record (its inputs,
evals/load/fixture_data.py); a baseline recorded before the records were kept is compared by
the files they are written in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from app.capabilities import REGISTRY
from app.manuals import demo as manuals
from app.manuals.pdf import PdfError, page_texts
from app.seed import DEMO_PEOPLE
from evals.execute.stubs import STUBBED_KINDS
from evals.fixtures.lab_catalog import CATALOGS
from evals.load.context import Context, offered_tools
from evals.load.fixture_data import sources, tickets
from evals.load.items import EvalItem
from evals.record.fingerprint import PlanInfo
from evals.settings import PHOTOS_DIR, PROJECT_ROOT

# What each kind of input is called, by the first part of its key.
KINDS = {"photo": "photo", "manual": "manual", "catalogue": "catalogue record",
         "ticket": "ticket", "person": "person"}
# The records in each tool's answer as the eval runs it: a case's writes and actions are
# stubbed and read nothing (evals/execute/stubs.py), a scenario's run for real.
READS: dict[str, frozenset[str]] = {
    "search_catalog": frozenset({"catalogue"}), "list_machines": frozenset({"catalogue"}),
    "get_machine_details": frozenset({"catalogue"}),
    "get_unit_status": frozenset({"catalogue", "ticket"}),
    "list_open_tickets": frozenset({"ticket"}), "search_manual": frozenset({"manual"}),
    "report_issue": frozenset({"catalogue", "ticket"}),  # the machine's name, the new id
    "update_ticket": frozenset({"ticket"}), "set_person_title": frozenset({"person"}),
}
_PHOTOS = str(PHOTOS_DIR.relative_to(PROJECT_ROOT))


def plural(kind: str) -> str:
    """A kind of input, more than one: "photos", "catalogue records", "people"."""
    return "people" if kind == "person" else f"{kind}s"


@dataclass(frozen=True)
class InputChange:
    """An input that differs from the baseline's, and the items whose requests may carry it."""

    kind: str  # "photo", "manual", "catalogue record", "ticket", "person"
    what: str  # "photo evals/fixtures/photos/x.jpg changed"
    items: tuple[str, ...]
    sources: tuple[str, ...]  # the plan's fixtures it is written in


def input_changes(old: PlanInfo, new: PlanInfo, items: Sequence[EvalItem]
                  ) -> tuple[InputChange, ...]:
    """The photos and records that differ between two plans, each with the items it touches
    (one that no item's request carries is left out: its file stays a plan note)."""
    users = _Users(items)
    out: list[InputChange] = []
    for fixture in sorted(new.fixtures):
        if fixture.startswith("photos/") and old.fixtures.get(fixture, new.fixtures[fixture]) \
                != new.fixtures[fixture]:
            name = fixture.removeprefix("photos/")
            out.append(InputChange("photo", f"photo {_PHOTOS}/{name} changed",
                                   users.of(f"photo/{name}"), (fixture,)))
    if old.inputs:
        # A catalogue the baseline's items did not run against is not compared: its records
        # are not new, the items that run against it are.
        held = {k.split("/")[1] for k in old.inputs if k.startswith("catalogue/")}
        for key in sorted(old.inputs.keys() | new.inputs.keys()):
            before, now = old.inputs.get(key), new.inputs.get(key)
            if key.startswith("catalogue/") and key.split("/")[1] not in held:
                continue
            if before != now:
                how = "added" if before is None else "removed" if now is None else "changed"
                kind = KINDS.get(key.partition("/")[0], key.partition("/")[0])
                out.append(InputChange(kind, f"{kind} {_name(key)} {how}", users.of(key),
                                       sources(key)))
    else:  # kept before records were: what the changed files hold, kind by kind
        changed = {f for f, h in new.fixtures.items() if old.fixtures.get(f, h) != h}
        by_file: dict[tuple[str, str], set[str]] = {}
        for key in sorted(new.inputs):
            for file in (f for f in sources(key) if f in changed):
                by_file.setdefault((KINDS[key.partition("/")[0]], file), set()).update(
                    users.of(key))
        out += [InputChange(kind, f"{plural(kind)} in {file}: the file changed (the baseline"
                            " kept no digest of each)",
                            tuple(i.id for i in items if i.id in ids), (file,))
                for (kind, file), ids in by_file.items()]
    return tuple(c for c in out if c.items)


def _name(key: str) -> str:
    """An input's name for a person: a file, a slug, a ticket's id, a handle."""
    kind, _, rest = key.partition("/")
    if kind == "manual":
        return sources(key)[0]
    if kind == "catalogue":
        return rest.partition("/")[2]
    return f"#{rest}" if kind == "ticket" else rest


class _Users:
    """Which items' requests may carry an input, by its key."""

    def __init__(self, items: Sequence[EvalItem]) -> None:
        self.items = items
        self.reads = {item.id: reads(item) for item in items}
        self.text: dict[str, bool | None] = {}

    def of(self, key: str) -> tuple[str, ...]:
        return tuple(i.id for i in self.items if self._uses(i, key))

    def _uses(self, item: EvalItem, key: str) -> bool:
        kind, _, rest = key.partition("/")
        ctx, reads = item.context, self.reads[item.id]
        if kind == "photo":
            return rest in item.photos
        if kind == "manual":  # a text layer is searched, a scanned manual attached whole
            slug, _, file = rest.partition("/")
            text = self.text.setdefault(file, _has_text(file))
            return (text is not False and "manual" in reads) or \
                (text is not True and ctx.tool_id == slug)
        if kind == "catalogue":
            phase, _, slug = rest.partition("/")
            held = phase not in CATALOGS or CATALOGS.index(ctx.catalog) >= CATALOGS.index(phase)
            return held and ("catalogue" in reads or ctx.tool_id == slug)
        if kind == "ticket":
            listed = tickets()
            title = listed[int(rest) - 1][1] if rest.isdigit() and int(rest) <= len(listed) \
                else None
            return "ticket" in reads or _selects(ctx, "/staff/tickets", title)
        if kind == "person":
            person = next((p for p in DEMO_PEOPLE if p[0] == rest), None)
            signed_in = ctx.as_ is not None and (person is None or _first_with_role(
                ctx.as_) == rest)
            return "person" in reads or signed_in or \
                _selects(ctx, "/people", person[1] if person else None)
        return True  # a kind this code does not know: every item, to be safe


def reads(item: EvalItem) -> frozenset[str]:
    """The kinds of record the tools an item is offered answer with (not those it freezes,
    nor a case's stubbed writes and actions)."""
    tools = REGISTRY.all_tools()
    out: set[str] = set()
    for name in offered_tools(item.context) - item.frozen_tools:
        tool = tools.get(name)
        if item.executor == "app" and tool is not None and tool.kind in STUBBED_KINDS:
            continue
        out |= READS.get(name, frozenset())
    return frozenset(out)


def _selects(ctx: Context, page: str, label: str | None) -> bool:
    """Whether an item ticks the row of this label on this page (None: a row that is gone,
    which any selection there may have named)."""
    if ctx.page_path != page or not ctx.selection:
        return False
    return label is None or label.lower() in {s.lower() for s in ctx.selection}


def _first_with_role(role: str) -> str | None:
    """The handle of the person a demo sign-in of this role is (the first seeded)."""
    return next((handle for handle, _, r, _ in DEMO_PEOPLE if r == role), None)


def _has_text(file: str) -> bool | None:
    """Whether a fixture manual has a text layer (None: it cannot be read)."""
    try:
        return _text_layer((manuals.FIXTURE_DIR / file).read_bytes())
    except OSError:
        return None


@cache
def _text_layer(data: bytes) -> bool | None:
    try:
        return any(page_texts(data, "manual"))
    except PdfError:
        return None
