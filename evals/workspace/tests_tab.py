"""The Tests tab: cases and scenarios with their criteria, their edit forms, the shared
criteria, frozen tool responses as typed forms, and groups. Every save goes through
`Writer.commit` (revision-checked, all-or-nothing, validated by the loaders) and shows the
YAML diff it made."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.capabilities import REGISTRY
from evals.load.cases import Case, load_cases_by_file
from evals.load.context import offered_tools
from evals.load.scenarios import Scenario, Shared, load_scenarios
from evals.load.yamlfile import YamlFileError
from evals.workspace import edits
from evals.workspace.layout import diff_html, e, hidden, page, refused, revs
from evals.workspace.sources import (
    Conflict,
    Edit,
    Invalid,
    Sources,
    Writer,
    WriteRefused,
)

MAX_FORM_FIELDS = 2000
ENFORCEMENT = ("required", "informational")
_SIMPLE = {"string": "text", "integer": "number", "number": "number", "boolean": "checkbox"}


@dataclass
class Loaded:
    cases: list[Case]
    scenarios: list[Scenario]
    shared: list[Shared]
    revisions: dict[str, str]
    error: str | None = None


def load(sources: Sources) -> Loaded:
    """The files as they are now, loaded as a run loads them (an error in any file: nothing
    can be edited until it is fixed, since a save must leave every file loading)."""
    revisions = sources.revisions()
    cases, errors = load_cases_by_file(sources.cases, sources.photos)
    if errors:
        return Loaded([], [], [], revisions,
                      "\n".join(e for lines in errors.values() for e in lines))
    try:
        scenarios, shared = load_scenarios(sources.scenarios)
    except YamlFileError as exc:
        return Loaded([], [], [], revisions, str(exc))
    return Loaded(cases, scenarios, shared, revisions)


def case_file(c: Case) -> str:
    return f"cases/{c.file}"


def scenario_file(s: Scenario) -> str:
    return f"scenarios/{s.file}"


SHARED_FILE = "scenarios/criteria.yaml"


def parse_revs(form: FormData) -> dict[str, str]:
    out = {}
    for value in form.getlist("rev"):
        name, _, rev = str(value).rpartition("@")
        out[name] = rev
    return out


def text(form: FormData, name: str) -> str | None:
    """A form field's text; None when the form has no such field (then nothing changes)."""
    value = form.get(name)
    return value if isinstance(value, str) else None


def given(form: FormData, name: str) -> str:
    return (text(form, name) or "").strip()


class TestsTab:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.writer = Writer(sources)

    def routes(self) -> list[Route]:
        return [
            Route("/tests", self.index),
            Route("/tests/shared", self.shared, methods=["GET", "POST"]),
            Route("/tests/case/{id}", self.case, methods=["GET", "POST"]),
            Route("/tests/scenario/{id}", self.scenario, methods=["GET", "POST"]),
            Route("/tests/scenario/{id}/criteria", self.add_criterion, methods=["POST"]),
            Route("/tests/scenario/{id}/responses", self.responses, methods=["GET", "POST"]),
            Route("/tests/group", self.group, methods=["GET", "POST"]),
            Route("/tests/rename", self.rename, methods=["GET", "POST"]),
        ]

    async def _form(self, request: Request) -> FormData:
        return await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)

    async def _save(self, form: FormData, edits_: dict[str, Edit], back: str,
                    what: str) -> Response:
        try:
            diffs = await run_in_threadpool(self.writer.commit, parse_revs(form), edits_)
        except WriteRefused as exc:
            return refused(str(exc), exc.status, back)
        return page("tests", "Saved", f"<p>{e(what)} The change, for review as a diff:</p>"
                    f"{diff_html(diffs)}<p><a href=\"{e(back)}\">Back to the form</a> ·"
                    ' <a href="/tests">All tests</a></p>')

    # the list -------------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        data = await run_in_threadpool(load, self.sources)
        if data.error:
            return page("tests", "Tests", f'<p class="error">The files do not load, so they'
                        f" cannot be edited here until they are fixed:\n{e(data.error)}</p>",
                        status=500)
        shared = data.shared
        rows = []
        for c in data.cases:
            rows.append(_row("case", c.id, case_file(c), c.group, c.prompt,
                             _case_criteria(c), f"/tests/case/{c.id}"))
        for s in data.scenarios:
            own = "".join(f"<li>{e(k.statement)} <span class=\"note\">({e(k.enforcement)})"
                          "</span></li>" for k in s.criteria)
            extra = "".join(f"<li>{e(x.criterion.statement)} <span class=\"note\">(shared,"
                            f" {e(x.criterion.enforcement)})</span></li>"
                            for x in shared if x.applies(s.id))
            add = (f'<form method="post" action="/tests/scenario/{e(s.id)}/criteria"'
                   ' class="stack">' + revs(data.revisions, [scenario_file(s)])
                   + '<label>Add a criterion to this scenario only</label>'
                   '<input type="text" name="statement" required>'
                   + _enforcement_select("enforcement", "required")
                   + '<button type="submit">Add criterion</button></form>')
            rows.append(_row("scenario", s.id, scenario_file(s), s.group,
                             s.opening or s.visitor.wants,
                             f"<ul>{own}{extra}</ul>{add}", f"/tests/scenario/{s.id}"))
        groups = sorted({g for g in [*(c.group for c in data.cases),
                                     *(s.group for s in data.scenarios)] if g})
        rename = "".join(f'<li>{e(g)} — <a href="/tests/rename?group={e(g)}">rename</a></li>'
                         for g in groups)
        body = (
            '<p><a href="/tests/shared">Shared criteria</a> (criteria that apply to several'
            " scenarios)</p>"
            '<div class="row"><div><label for="search"><strong>Search</strong></label>'
            '<input type="text" id="search" placeholder="id, file, group or text"'
            ' autocomplete="off"></div></div>'
            '<form method="get" action="/tests/group" id="pick"><p><button type="submit">'
            'Group selected</button> <span class="note">(the selection is kept when a search'
            " hides a row)</span></p></form>"
            f'<table class="list" id="tests">{"".join(rows)}</table>'
            f"<h3>Groups</h3><ul>{rename or '<li>none yet</li>'}</ul>")
        return page("tests", "Tests", body, script=True)

    async def _scenario(self, sid: str) -> tuple[Loaded, Scenario | None]:
        data = await run_in_threadpool(load, self.sources)
        return data, next((s for s in data.scenarios if s.id == sid), None)

    # one case ---------------------------------------------------------------------------------

    async def case(self, request: Request) -> Response:
        cid = request.path_params["id"]
        data = await run_in_threadpool(load, self.sources)
        found = next((c for c in data.cases if c.id == cid), None)
        if found is None:
            return refused(f"no case {cid!r} (renamed or removed?)", 404)
        back = f"/tests/case/{cid}"
        if request.method == "POST":
            form = await self._form(request)
            change = edits.case_fields(text(form, "id"), text(form, "prompt"),
                                       text(form, "group"), text(form, "rubric"),
                                       text(form, "must_not"))
            return await self._save(form, {case_file(found): edits.on_entry(cid, change)},
                                    f"/tests/case/{given(form, 'id') or cid}",
                                    f"Case {cid} saved.")
        body = (f'<p class="note">{e(case_file(found))}, line {found.line}. Structural checks:'
                f" {e(', '.join(k.kind for k in found.structural()) or 'none')} (edited in the"
                f' file).</p><form method="post" class="stack" action="{e(back)}">'
                + revs(data.revisions, [case_file(found)])
                + _field("id", "Name (id)", found.id)
                + _area("prompt", "Prompt", found.prompt)
                + _field("group", "Group", found.group or "")
                + _area("rubric", "Criterion: what a good reply does (judged)",
                        found.rubric or "")
                + _area("must_not", "Criterion: what the reply must not do (judged)",
                        found.must_not or "")
                + '<button type="submit">Save</button><a class="button plain" href="/tests">'
                "Cancel</a></form>")
        return page("tests", f"Case {cid}", body)

    # one scenario -----------------------------------------------------------------------------

    async def scenario(self, request: Request) -> Response:
        sid = request.path_params["id"]
        data, found = await self._scenario(sid)
        if found is None:
            return refused(f"no scenario {sid!r} (renamed or removed?)", 404)
        if request.method == "POST":
            form = await self._form(request)
            statements = [str(v) for v in form.getlist("statement")]
            levels = [str(v) for v in form.getlist("enforcement")]
            removed = {str(v) for v in form.getlist("remove")}
            if len(statements) != len(levels) or any(x not in ENFORCEMENT for x in levels):
                return refused("each criterion needs an enforcement: required or"
                               " informational", 422, f"/tests/scenario/{sid}")
            rows = [(st, en) for i, (st, en) in enumerate(zip(statements, levels, strict=True))
                    if st.strip() and str(i) not in removed]
            visitor = {k: text(form, f"visitor.{k}") for k in edits.VISITOR_KEYS}
            change = edits.scenario_fields(text(form, "id"), text(form, "group"),
                                           text(form, "opening"), visitor,
                                           rows if "statement" in form else None)
            new_id = given(form, "id") or sid
            return await self._save(form, {scenario_file(found): edits.on_entry(sid, change)},
                                    f"/tests/scenario/{new_id}", f"Scenario {sid} saved.")
        criteria = "".join(
            f'<div class="row criterion"><div><textarea name="statement" rows="2"'
            f' aria-label="criterion {n + 1}">{e(k.statement)}</textarea></div>'
            f'<div>{_enforcement_select("enforcement", k.enforcement)}'
            f'<label class="note"><input type="checkbox" name="remove" value="{n}">'
            " remove</label></div></div>" for n, k in enumerate(found.criteria))
        criteria += ('<div class="row criterion"><div><textarea name="statement" rows="2"'
                     ' placeholder="add a criterion (this scenario only)"'
                     ' aria-label="new criterion"></textarea></div>'
                     f'<div>{_enforcement_select("enforcement", "required")}</div></div>')
        shared = "".join(f"<li>{e(x.criterion.statement)} ({e(x.criterion.enforcement)})</li>"
                         for x in data.shared if x.applies(sid))
        frozen = "".join(f'<li><a href="/tests/scenario/{e(sid)}/responses?tool={e(t)}">'
                         f"{e(t)}</a>: {len(r.sequence)} response(s)</li>"
                         for t, r in found.tool_responses.items())
        offered = sorted(offered_tools(found.context) - set(found.tool_responses))
        add_tool = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in offered)
        v = found.visitor
        body = (
            f'<p class="note">{e(scenario_file(found))}, line {found.line}.</p>'
            f'<form method="post" class="stack" action="/tests/scenario/{e(sid)}">'
            + revs(data.revisions, [scenario_file(found)])
            + _field("id", "Name (id)", found.id) + _field("group", "Group", found.group or "")
            + "<h3>Visitor instructions</h3>"
            + "".join(_area(f"visitor.{k}", k.replace("_", " "), getattr(v, k))
                      for k in edits.VISITOR_KEYS)
            + _area("opening", "Opening message (empty: the visitor writes it)",
                    found.opening or "")
            + f'<h3>Criteria</h3><div id="criteria">{criteria}</div>'
            + '<button type="submit">Save</button>'
            '<a class="button plain" href="/tests">Cancel</a></form>'
            + f"<h3>Shared criteria that apply</h3><ul>{shared or '<li>none</li>'}</ul>"
            + "<h3>Frozen tool responses</h3><ul>"
            + (frozen or "<li>none: tools answer from the scenario&#39;s own database</li>")
            + "</ul>"
            + (f'<form method="get" action="/tests/scenario/{e(sid)}/responses">'
               f'<select name="tool" aria-label="tool">{add_tool}</select>'
               '<button type="submit" class="plain">Freeze a tool&#39;s responses</button>'
               "</form>" if offered else ""))
        return page("tests", f"Scenario {sid}", body)

    async def add_criterion(self, request: Request) -> Response:
        sid = request.path_params["id"]
        data, found = await self._scenario(sid)
        if found is None:
            return refused(f"no scenario {sid!r} (renamed or removed?)", 404)
        form = await self._form(request)
        enforcement = text(form, "enforcement")
        if enforcement not in ENFORCEMENT:
            return refused("enforcement is required or informational", 422, "/tests")
        if not given(form, "statement"):
            return refused("a criterion needs a statement", 422, "/tests")
        change = edits.add_criterion(given(form, "statement"), enforcement)
        return await self._save(form, {scenario_file(found): edits.on_entry(sid, change)},
                                f"/tests/scenario/{sid}", f"A criterion was added to {sid}.")

    # frozen tool responses --------------------------------------------------------------------

    async def responses(self, request: Request) -> Response:
        sid = request.path_params["id"]
        tool_name = request.query_params.get("tool", "")
        data, found = await self._scenario(sid)
        tool = REGISTRY.all_tools().get(tool_name)
        if found is None or tool is None or tool.result is None:
            return refused(f"no scenario {sid!r} or no tool {tool_name!r}", 404)
        back = f"/tests/scenario/{sid}/responses?tool={tool_name}"
        schema = tool.result.model_json_schema()
        if request.method == "POST":
            form = await self._form(request)
            try:
                responses = (None if text(form, "mode") == "remove" else
                             _raw_responses(text(form, "raw") or "")
                             if text(form, "mode") == "raw" else _typed_responses(form, schema))
            except Invalid as exc:
                return refused(str(exc), 422, back)
            exhausted = text(form, "exhausted") or "error"
            if exhausted not in ("error", "repeat_last"):
                return refused("exhausted is error or repeat_last", 422, back)
            change = edits.tool_responses(tool_name, tool.contract(), responses, exhausted)
            return await self._save(form, {scenario_file(found): edits.on_entry(sid, change)},
                                    back, f"{tool_name}'s frozen responses in {sid} saved.")
        frozen = found.tool_responses.get(tool_name)
        sequence = frozen.sequence if frozen else [{}]
        exhausted = frozen.exhausted if frozen else "error"
        stale = (f'<p class="error">These responses were written for contract'
                 f" {e(frozen.contract)}; the tool's is now {e(tool.contract())}.</p>"
                 if frozen and frozen.contract != tool.contract() else "")
        fields = "".join(_typed_response(n, r, schema) for n, r in enumerate(sequence))
        fields += _typed_response(len(sequence), None, schema)  # one more, left empty
        rev = revs(data.revisions, [scenario_file(found)])
        exhaust = ('<label>When the responses run out</label><select name="exhausted">'
                   + "".join(f'<option{" selected" if x == exhausted else ""}>{x}</option>'
                             for x in ("error", "repeat_last")) + "</select>")
        body = (
            f'{stale}<p class="note">Each call of {e(tool_name)} in a conversation of {e(sid)}'
            " gets the next response instead of the real tool. A response must fit the"
            " tool's result schema, or be an error. Leave a response empty to drop it.</p>"
            f'<form method="post" class="stack" action="{e(back)}">{rev}'
            + hidden("mode", "typed") + fields + exhaust
            + '<button type="submit">Save</button>'
            f'<a class="button plain" href="/tests/scenario/{e(sid)}">Cancel</a></form>'
            "<h3>Or as raw JSON</h3>"
            f'<form method="post" class="stack" action="{e(back)}">{rev}'
            + hidden("mode", "raw")
            + '<textarea class="json" name="raw" aria-label="raw JSON">'
            + e(json.dumps(frozen.sequence if frozen else [], indent=2, ensure_ascii=False))
            + f"</textarea>{exhaust}<button type=\"submit\">Save JSON</button></form>"
            + (f'<form method="post" action="{e(back)}">{rev}{hidden("mode", "remove")}'
               '<button type="submit" class="plain">Unfreeze (use the real tool)</button>'
               "</form>" if frozen else "")
            + f"<h3>Result schema</h3><pre class=\"log\">{e(json.dumps(schema, indent=2))}"
            "</pre>")
        return page("tests", f"{tool_name} in {sid}", body)

    # shared criteria --------------------------------------------------------------------------

    async def shared(self, request: Request) -> Response:
        data = await run_in_threadpool(load, self.sources)
        if request.method == "POST":
            form = await self._form(request)
            enforcement = text(form, "enforcement")
            if enforcement not in ENFORCEMENT:
                return refused("enforcement is required or informational", 422,
                               "/tests/shared")
            index = text(form, "index")
            if index == "new":
                if not given(form, "statement"):
                    return refused("a criterion needs a statement", 422, "/tests/shared")
                edit = edits.appended({"statement": given(form, "statement"),
                                       "enforcement": enforcement,
                                       "applies_to": edits.parse_applies_to(
                                           given(form, "applies_to"))})
            elif index is not None and index.isdigit():
                edit = edits.on_index(int(index), None if text(form, "remove") else
                                      edits.shared_fields(text(form, "statement"), enforcement,
                                                          text(form, "applies_to")))
            else:
                return refused("which criterion?", 400, "/tests/shared")
            return await self._save(form, {SHARED_FILE: edit}, "/tests/shared",
                                    "The shared criteria were saved.")
        rev = revs(data.revisions, [SHARED_FILE]) if SHARED_FILE in data.revisions else ""
        forms = []
        for n, x in enumerate([*data.shared, None]):
            statement = x.criterion.statement if x else ""
            enforcement = x.criterion.enforcement if x else "required"
            applies = ("all" if x is None or x.applies_to == "all" else
                       ", ".join(x.applies_to))
            forms.append(
                f'<section class="panel"><form method="post" class="stack"'
                f' action="/tests/shared">{rev}{hidden("index", n if x else "new")}'
                + _field("statement", "Statement" if x else "New shared criterion", statement)
                + '<label>Enforcement</label>' + _enforcement_select("enforcement", enforcement)
                + _field("applies_to", "Applies to (all, or scenario ids separated by commas)",
                         applies)
                + '<button type="submit">' + ("Save" if x else "Add") + "</button>"
                + ('<button type="submit" name="remove" value="1" class="plain">Remove</button>'
                   if x else "") + "</form></section>")
        return page("tests", "Shared criteria", "".join(forms))

    # groups -----------------------------------------------------------------------------------

    async def group(self, request: Request) -> Response:
        """GET: the form, with the selection frozen in it; POST: set that group on them."""
        data = await run_in_threadpool(load, self.sources)
        files = {**{c.id: case_file(c) for c in data.cases},
                 **{s.id: scenario_file(s) for s in data.scenarios}}
        if request.method == "GET":
            picked = [i for i in request.query_params.getlist("pick") if i in files]
            if not picked:
                return refused("select at least one test (the boxes in the list)", 400,
                               "/tests")
            body = (f"<p>{len(picked)} selected: {e(', '.join(picked))}</p>"
                    '<form method="post" class="stack" action="/tests/group">'
                    # every file: a test added to or renamed in any file meanwhile is stale
                    + revs(data.revisions, list(data.revisions))
                    + "".join(hidden("pick", i) for i in picked)
                    + _field("group", "Group name", "")
                    + '<button type="submit">Group them</button>'
                    '<a class="button plain" href="/tests">Cancel</a></form>')
            return page("tests", "Group selected", body)
        form = await self._form(request)
        picked = [str(i) for i in form.getlist("pick")]
        gone = [i for i in picked if i not in files]
        if gone:
            return refused(f"{', '.join(gone)}: no longer in the files; reload", 409)
        by_file: dict[str, list[str]] = {}
        for i in picked:
            by_file.setdefault(files[i], []).append(i)
        group = given(form, "group")
        if not group:
            return refused("give the group a name", 422, "/tests")
        return await self._save(form, {f: _each(ids, edits.set_group(group))
                                       for f, ids in by_file.items()},
                                "/tests", f"{len(picked)} test(s) grouped as {group!r}.")

    async def rename(self, request: Request) -> Response:
        data = await run_in_threadpool(load, self.sources)
        files = {**{c.id: case_file(c) for c in data.cases if c.group},
                 **{s.id: scenario_file(s) for s in data.scenarios if s.group}}
        groups = {**{c.id: c.group for c in data.cases if c.group},
                  **{s.id: s.group for s in data.scenarios if s.group}}
        if request.method == "GET":
            name = request.query_params.get("group", "")
            members = sorted(i for i, g in groups.items() if g == name)
            if not members:
                return refused(f"no group {name!r}", 404)
            body = (f"<p>{len(members)} member(s): {e(', '.join(members))}</p>"
                    '<form method="post" class="stack" action="/tests/rename">'
                    + revs(data.revisions, list(data.revisions))
                    + hidden("from", name) + "".join(hidden("member", i) for i in members)
                    + _field("to", "New name", name)
                    + '<button type="submit">Rename</button>'
                    '<a class="button plain" href="/tests">Cancel</a></form>')
            return page("tests", f"Rename the group {name}", body)
        form = await self._form(request)
        old, new = given(form, "from"), given(form, "to")
        frozen = sorted(str(i) for i in form.getlist("member"))
        now = sorted(i for i, g in groups.items() if g == old)
        if not new:
            return refused("give the group a new name (an empty one would ungroup them)", 422,
                           f"/tests/rename?group={old}")
        try:
            if new != old and new in groups.values():
                raise Conflict(f"a group named {new!r} exists already; choose another name"
                               " (or group its members with these ones)")
            if frozen != now:
                raise Conflict(f"the members of {old!r} changed since the form was opened"
                               f" (then: {', '.join(frozen) or 'none'}; now:"
                               f" {', '.join(now) or 'none'}); reload")
        except Conflict as exc:
            return refused(str(exc), 409, f"/tests/rename?group={old}")
        by_file: dict[str, list[str]] = {}
        for i in now:
            by_file.setdefault(files[i], []).append(i)
        return await self._save(form, {f: _each(ids, edits.set_group(new))
                                       for f, ids in by_file.items()},
                                "/tests", f"The group {old!r} is now {new!r}.")


# pieces ---------------------------------------------------------------------------------------

def _each(ids: list[str], change: edits.Change) -> Edit:
    wanted = [edits.on_entry(i, change) for i in ids]

    def edit(entries: list[str]) -> list[str]:
        for one in wanted:
            entries = one(entries)
        return entries
    return edit


def _row(kind: str, tid: str, file: str, group: str | None, text_: str, criteria: str,
         href: str) -> str:
    words = " ".join([tid, file, group or "", text_]).lower()
    return (f'<tr data-search="{e(words)}"><td class="pick"><input type="checkbox"'
            f' name="pick" form="pick" value="{e(tid)}" aria-label="select {e(tid)}"></td><td>'
            f'<details><summary><a href="{e(href)}" class="id">{e(tid)}</a> <span'
            f' class="note">{kind} · {e(file)}{" · " + e(group) if group else ""}</span>'
            f"</summary><p>{e(text_)}</p>{criteria}</details></td></tr>")


def _case_criteria(c: Case) -> str:
    items = [f"<li>{e(k.kind)} <span class=\"note\">(structural)</span></li>"
             for k in c.structural()]
    if c.rubric:
        items.append(f"<li>{e(c.rubric)} <span class=\"note\">(judged)</span></li>")
    if c.must_not:
        items.append(f"<li>must not: {e(c.must_not)} <span class=\"note\">(judged)</span></li>")
    return f"<ul>{''.join(items)}</ul>"


def _field(name: str, label: str, value: str) -> str:
    return (f'<label for="f-{e(name)}">{e(label)}</label><input type="text" id="f-{e(name)}"'
            f' name="{e(name)}" value="{e(value)}">')


def _area(name: str, label: str, value: str) -> str:
    return (f'<label for="f-{e(name)}">{e(label)}</label><textarea id="f-{e(name)}"'
            f' name="{e(name)}">{e(value)}</textarea>')


def _enforcement_select(name: str, value: str) -> str:
    return (f'<select name="{e(name)}" aria-label="enforcement">'
            + "".join(f'<option{" selected" if x == value else ""}>{x}</option>'
                      for x in ENFORCEMENT) + "</select>")


def _types(spec: dict[str, Any]) -> list[Any]:
    return [spec.get("type"), *(x.get("type") for x in spec.get("anyOf", []))]


def _kind(spec: dict[str, Any]) -> str | None:
    """A simple field's input type; None for one edited as JSON."""
    types = _types(spec)
    simple = [t for t in types if t in _SIMPLE]
    return _SIMPLE[simple[0]] if len(simple) == 1 and all(
        t in (simple[0], "null", None) for t in types) else None


def _typed_response(n: int, response: dict[str, Any] | None, schema: dict[str, Any]) -> str:
    """One response as a fieldset: an error, or a field per result property (keys the schema
    does not name ride along unchanged)."""
    response = response or {}
    properties = schema.get("properties", {})
    error = response.get("error", "") if set(response) == {"error"} else ""
    rows = [f'<legend>Response {n + 1}{" (new)" if not response else ""}</legend>',
            _field(f"r{n}.error", "error (instead of a result: the tool failed)", error)]
    for name, spec in properties.items():
        value = response.get(name) if not error else None
        kind = _kind(spec)
        label = f"{name}{' *' if name in schema.get('required', []) else ''}"
        if kind == "checkbox":
            rows.append(f'<label><input type="checkbox" name="r{n}.{e(name)}" value="true"'
                        f'{" checked" if value else ""}> {e(label)}</label>')
        elif kind is not None:
            rows.append(f'<label for="f-r{n}.{e(name)}">{e(label)}</label><input'
                        f' type="{kind}" step="any" id="f-r{n}.{e(name)}"'
                        f' name="r{n}.{e(name)}" value="{e("" if value is None else value)}">')
        else:
            shown = "" if value is None else json.dumps(value, indent=1, ensure_ascii=False)
            rows.append(f'<label for="f-r{n}.{e(name)}">{e(label)} (JSON)</label><textarea'
                        f' class="json" id="f-r{n}.{e(name)}" name="r{n}.{e(name)}">'
                        f"{e(shown)}</textarea>")
    extra = {k: v for k, v in response.items() if k not in properties and not error}
    return (f'<fieldset class="response">{"".join(rows)}{hidden(f"r{n}.present", "1")}'
            + (hidden(f"r{n}.existing", "1") if response else "")
            + (hidden(f"r{n}.extra", json.dumps(extra)) if extra else "") + "</fieldset>")


def _typed_responses(form: FormData, schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The typed form back as responses: an existing response is kept even when every field
    is empty or false; a new one only once something is filled in."""
    out = []
    n = 0
    while text(form, f"r{n}.present"):
        error = given(form, f"r{n}.error")
        if error:
            out.append({"error": error})
            n += 1
            continue
        response: dict[str, Any] = {}
        filled = False
        for name, spec in schema.get("properties", {}).items():
            raw = (text(form, f"r{n}.{name}") or "").replace("\r\n", "\n")
            kind, nullable = _kind(spec), "null" in _types(spec)
            what = f"response {n + 1}: {name}"
            if kind == "checkbox":
                response[name] = bool(raw)
                filled = filled or bool(raw)
            elif kind == "number":
                if raw.strip():
                    response[name] = _number(raw.strip(), "integer" in _types(spec), what)
                    filled = True
                elif nullable:
                    response[name] = None
            elif kind == "text":
                response[name] = None if raw == "" and nullable else raw
                filled = filled or bool(raw)
            elif raw.strip():
                response[name] = _json_value(raw, what)
                filled = True
        extra = text(form, f"r{n}.extra")
        if extra:
            response.update(edits.parse_json_object(extra, f"response {n + 1}"))
        if filled or text(form, f"r{n}.existing"):
            out.append(response)
        n += 1
    if not out:
        raise Invalid("no response left: fill one in, or unfreeze the tool")
    return out


def _number(raw: str, integer: bool, what: str) -> int | float:
    try:
        return int(raw) if integer else float(raw)
    except ValueError:
        raise Invalid(f"{what}: {'a whole number' if integer else 'a number'}") from None


def _json_value(raw: str, what: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Invalid(f"{what}: not JSON: {exc.msg}") from exc


def _raw_responses(raw: str) -> list[dict[str, Any]]:
    value = _json_value(raw, "raw JSON")
    if not isinstance(value, list) or not value:
        raise Invalid("raw JSON: a list of responses, [{...}, ...], with at least one")
    return [edits.parse_json_object(json.dumps(v), f"response {n + 1}")
            for n, v in enumerate(value)]


