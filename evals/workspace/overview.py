"""The Overview tab: choose a quick or a full run (or a comparison with a saved point), see
how many conversations it will hold, start it, and follow it under Results."""

from __future__ import annotations

import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from evals.load.cases import CaseFileError
from evals.load.selection import select_items
from evals.record.fingerprint import Selection
from evals.record.launches import LaunchConflict, valid_key
from evals.record.store import RunStore, StoreError
from evals.workspace.launch import POINT_NAME, Launcher, LaunchError
from evals.workspace.launch import Request as LaunchRequest
from evals.workspace.layout import HEADERS, e, hidden, page
from evals.workspace.sources import Sources

MAX_REPEAT = 10


class OverviewTab:
    def __init__(self, launcher: Launcher, sources: Sources) -> None:
        self.launcher = launcher
        self.sources = sources

    def routes(self) -> list[Route]:
        return [Route("/", self.index), Route("/launch", self.launch, methods=["POST"]),
                Route("/launch/stop", self.stop, methods=["POST"])]

    async def index(self, request: Request) -> Response:
        store: RunStore = request.app.state.store
        points = await store.list_points()
        comparisons = await store.list_comparisons(10)
        files = self.sources.files()
        groups = await run_in_threadpool(_groups)
        busy = self.launcher.busy
        file_boxes = "".join(
            f'<label><input type="checkbox" name="names" value="{e(_stem(f))}"> {e(f)}</label>'
            for f in files if not f.endswith("/criteria.yaml"))
        group_boxes = "".join(f'<label><input type="checkbox" name="groups" value="{e(g)}">'
                              f" {e(g)}</label>" for g in groups)
        point_options = "".join(f'<option value="{e(p.name)}">{e(p.name)} ·'
                                f' {e(p.model)} · {p.created_at:%Y-%m-%d}</option>'
                                for p in points)
        compare = (
            '<fieldset><legend>Compare with a saved version (optional)</legend>'
            '<label class="choices"><input type="checkbox" name="compare" value="1"> run the'
            " saved point below and today's version under its plan, and pair them</label>"
            f'<select name="point" aria-label="point">{point_options}</select>'
            '<p class="note">A comparison runs the point&#39;s own selection and repetitions;'
            " the choices above apply to a plain run.</p></fieldset>"
            if points else '<p class="note">No saved versions yet: save one below.</p>')
        listed = "".join(
            f'<li><a href="/comparisons/{e(c.id)}">{e(c.id)}</a>'
            f' · {c.created_at:%Y-%m-%d %H:%M} · {e(c.point or "stored runs")} · '
            + " · ".join(f"{int(v)} {e(k)}" for k, v in (c.counts or {}).items())
            + "</li>" for c in comparisons)
        body = (
            ('<p class="note">A run is under way: <a href="/results">follow it under'
             " Results</a>.</p>" if busy else "")
            + '<section class="panel"><form method="post" action="/launch" class="stack">'
            '<fieldset><legend>Run</legend><label class="choices"><input type="radio"'
            ' name="mode" value="quick" checked> quick: one calm visitor per scenario</label>'
            '<label class="choices"><input type="radio" name="mode" value="full"> full: every'
            " visitor style</label></fieldset>"
            '<fieldset><legend>What (nothing ticked: everything)</legend><div class="choices">'
            f"{file_boxes}</div>"
            + _text("ids", "Case or scenario ids, separated by commas", "")
            + f'<p><strong>Groups</strong></p><div class="choices">{group_boxes}</div>'
            '<label class="choices"><input type="radio" name="kinds" value="both" checked>'
            ' cases and scenarios</label><label class="choices"><input type="radio"'
            ' name="kinds" value="cases"> cases only</label><label class="choices"><input'
            ' type="radio" name="kinds" value="scenarios"> scenarios only</label>'
            '<label for="repeat">Repetitions</label><input type="number" id="repeat"'
            f' name="repeat" value="1" min="1" max="{MAX_REPEAT}"></fieldset>'
            + compare
            + '<fieldset><legend>Save today&#39;s version (optional)</legend>'
            + _text("save_point", "Save it first as a comparison point named", "")
            + "</fieldset>"
            '<button type="submit">Review and run</button></form></section>'
            f"<h3>Comparisons</h3><ul>{listed or '<li>none yet</li>'}</ul>")
        return page("overview", "Overview", body)

    async def launch(self, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=500)
        try:
            asked = _asked(form)
            count = await self._count(request.app.state.store, asked)
        except (LaunchError, CaseFileError, StoreError) as exc:
            return page("overview", "Cannot run that", f'<p class="error">{e(exc)}</p>'
                        '<p><a href="/">Back to the Overview</a></p>', status=422)
        if form.get("confirm") != "1":
            kept = "".join(hidden(k, v) for k, v in form.multi_items() if isinstance(v, str))
            # The confirmed form carries its own idempotency key: a second post of it (a
            # double click, a reload, a retry) returns the run it started, never a second.
            if not form.get("idempotency_key"):
                kept += hidden("idempotency_key", secrets.token_urlsafe(18))
            return page("overview", "Review the run",
                        f"<p>{e(_describe(asked))}</p><p><strong>{e(count)}</strong></p>"
                        '<form method="post" action="/launch">' + kept + hidden("confirm", "1")
                        + '<button type="submit">Run</button><a class="button plain" href="/">'
                        "Cancel</a></form>")
        given = form.get("idempotency_key")
        try:
            key = valid_key(given) if isinstance(given, str) and given else None
        except ValueError as exc:
            return page("overview", "Cannot run that", f'<p class="error">{e(exc)}</p>',
                        status=422)
        store: RunStore = request.app.state.store
        try:
            launched = await self.launcher.launch(store, asked, _describe(asked), key)
        except (LaunchError, LaunchConflict) as exc:  # one at a time; a key's other request
            return page("overview", "Cannot run that", f'<p class="error">{e(exc)}</p>',
                        status=409)
        if launched.repeated and launched.job is None:  # another process's: its stored runs
            runs = await store.launched(launched.id)
            if runs:
                return RedirectResponse(f"/results?run={runs[0].id}", 303, headers=HEADERS)
        return RedirectResponse("/results", 303, headers=HEADERS)

    async def stop(self, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=10)
        try:
            self.launcher.stop(str(form.get("job", "")))
        except LaunchError as exc:
            return page("results", "Nothing to stop", f'<p class="error">{e(exc)}</p>',
                        status=409)
        return RedirectResponse("/results", 303, headers=HEADERS)

    async def _count(self, store: RunStore, asked: LaunchRequest) -> str:
        """How many conversations the run holds: items × repetitions × versions."""
        if asked.compare_with:
            point = await store.load_point(asked.compare_with)
            n, repeat = len(point.plan.cases), point.plan.repeat
            return (f"{n} cases × {repeat} repetition(s) × 2 versions = {n * repeat * 2}"
                    " conversations")
        items = await run_in_threadpool(select_items, Selection(
            names=tuple(asked.names), groups=tuple(asked.groups),
            only=None if asked.kinds == "both" else asked.kinds, full=asked.mode == "full"))
        if not items:
            raise LaunchError("that selection holds no case and no scenario")
        scenarios = sum("@" in i.id for i in items)
        return (f"{len(items) - scenarios} cases + {scenarios} scenario conversations ×"
                f" {asked.repeat} repetition(s) = {len(items) * asked.repeat} conversations")


def _asked(form: FormData) -> LaunchRequest:
    def one(name: str) -> str:
        value = form.get(name)
        return value.strip() if isinstance(value, str) else ""

    mode = one("mode") or "quick"
    kinds = one("kinds") or "both"
    if mode not in ("quick", "full") or kinds not in ("both", "cases", "scenarios"):
        raise LaunchError("mode is quick or full; kinds is both, cases or scenarios")
    try:
        repeat = int(one("repeat") or "1")
    except ValueError:
        raise LaunchError("repetitions: a whole number") from None
    if not 1 <= repeat <= MAX_REPEAT:
        raise LaunchError(f"repetitions: 1 to {MAX_REPEAT}")
    names = [str(n) for n in form.getlist("names")] + [
        n.strip() for n in one("ids").split(",") if n.strip()]
    save = one("save_point") or None
    compare_with = one("point") if one("compare") == "1" else None
    for name in (save, compare_with):
        if name is not None and not POINT_NAME.match(name):
            raise LaunchError(f"point name {name!r}: letters, digits, '.', '_' and '-', up to"
                              " 64")
    if compare_with and save:
        raise LaunchError("either compare with a saved point or save a new one, not both at"
                          " once")
    return LaunchRequest(mode=mode, names=tuple(dict.fromkeys(names)),  # type: ignore[arg-type]
                         groups=tuple(str(g) for g in form.getlist("groups")),
                         repeat=repeat, kinds=kinds,  # type: ignore[arg-type]
                         compare_with=compare_with, save_point=save)


def _describe(asked: LaunchRequest) -> str:
    if asked.compare_with:
        return f"comparison with point {asked.compare_with}"
    what = ", ".join([*asked.names, *(f"group {g}" for g in asked.groups)]) or "everything"
    return (f"{asked.mode} run of {what}"
            + (f" ({asked.kinds} only)" if asked.kinds != "both" else "")
            + (f", saved first as point {asked.save_point}" if asked.save_point else ""))


def _groups() -> list[str]:
    try:
        items = select_items(Selection())
    except CaseFileError:
        return []
    return sorted({i.group for i in items if i.group})


def _stem(name: str) -> str:
    return name.rpartition("/")[2].removesuffix(".yaml")


def _text(name: str, label: str, value: Any) -> str:
    return (f'<label for="f-{name}">{e(label)}</label><input type="text" id="f-{name}"'
            f' name="{name}" value="{e(value)}">')
