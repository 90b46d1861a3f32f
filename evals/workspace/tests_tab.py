"""The Tests tab: cases and scenarios with their criteria, their edit forms, the shared
criteria, and frozen tool responses as typed forms. Every save goes through `Writer.commit`
(evals/workspace/forms.py) and shows the YAML diff it made."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evals.load.context import offered_tools
from evals.load.responses import ToolResponses
from evals.load.scenarios import Scenario
from evals.workspace import edits, expected, field_edits
from evals.workspace.expected_edits import expected_actions
from evals.workspace.form_values import whole_number
from evals.workspace.forms import (
    ENFORCEMENT,
    SHARED_FILE,
    Loaded,
    Tab,
    area,
    case_criteria,
    case_file,
    enforcement_select,
    field,
    given,
    load,
    row,
    scenario_file,
    text,
)
from evals.workspace.layout import e, hidden, page, refused, revs
from evals.workspace.refusals import Invalid


class TestsTab(Tab):
    def routes(self) -> list[Route]:
        return [
            Route("/tests", self.index),
            Route("/tests/shared", self.shared, methods=["GET", "POST"]),
            Route("/tests/case/{id}", self.case, methods=["GET", "POST"]),
            Route("/tests/scenario/{id}", self.scenario, methods=["GET", "POST"]),
            Route("/tests/scenario/{id}/criteria", self.add_criterion, methods=["POST"]),
        ]

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
            rows.append(row("case", c.id, case_file(c), c.group, c.prompt,
                             case_criteria(c), f"/tests/case/{c.id}"))
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
                   + enforcement_select("enforcement", "required")
                   + '<button type="submit">Add criterion</button></form>')
            rows.append(row("scenario", s.id, scenario_file(s), s.group,
                             s.opening or s.visitor.wants,
                             f"<ul>{own}{extra}</ul>{expected.listed(s)}{add}",
                             f"/tests/scenario/{s.id}"))
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
            change = field_edits.case_fields(text(form, "id"), text(form, "prompt"),
                                             text(form, "group"), text(form, "rubric"),
                                             text(form, "must_not"))
            return await self._save(form, {case_file(found): edits.on_entry(cid, change)},
                                    f"/tests/case/{given(form, 'id') or cid}",
                                    f"Case {cid} saved.")
        body = (f'<p class="note">{e(case_file(found))}, line {found.line}. Structural checks:'
                f" {e(', '.join(k.kind for k in found.structural()) or 'none')} (edited in the"
                f' file).</p><form method="post" class="stack" action="{e(back)}">'
                + revs(data.revisions, [case_file(found)])
                + field("id", "Name (id)", found.id)
                + area("prompt", "Prompt", found.prompt)
                + field("group", "Group", found.group or "")
                + area("rubric", "Criterion: what a good reply does (judged)",
                        found.rubric or "")
                + area("must_not", "Criterion: what the reply must not do (judged)",
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
            visitor = {k: text(form, f"visitor.{k}") for k in field_edits.VISITOR_KEYS}
            changes = [field_edits.scenario_fields(text(form, "id"), text(form, "group"),
                                                   text(form, "opening"), visitor,
                                                   rows if "statement" in form else None)]
            try:
                actions = expected.rows(form)
            except Invalid as exc:
                return refused(str(exc), 422, f"/tests/scenario/{sid}")
            if actions is not None:
                changes.append(expected_actions(actions))
            new_id = given(form, "id") or sid
            review = ("The scenario would not load with this form's changes. Review its expected"
                      " actions (their tools and selectors) with the criteria changed beside"
                      " them: they are checked together, as the file would be; the loader says:"
                      if expected.changed(found, actions) else None)
            return await self._save(
                form, {scenario_file(found): edits.on_entry(sid, edits.together(changes))},
                f"/tests/scenario/{new_id}", f"Scenario {sid} saved.", review=review)
        criteria = "".join(
            f'<div class="row criterion"><div><textarea name="statement" rows="2"'
            f' aria-label="criterion {n + 1}">{e(k.statement)}</textarea></div>'
            f'<div>{enforcement_select("enforcement", k.enforcement)}'
            f'<label class="note"><input type="checkbox" name="remove" value="{n}">'
            " remove</label></div></div>" for n, k in enumerate(found.criteria))
        criteria += ('<div class="row criterion"><div><textarea name="statement" rows="2"'
                     ' placeholder="add a criterion (this scenario only)"'
                     ' aria-label="new criterion"></textarea></div>'
                     f'<div>{enforcement_select("enforcement", "required")}</div></div>')
        shared = "".join(f"<li>{e(x.criterion.statement)} ({e(x.criterion.enforcement)})</li>"
                         for x in data.shared if x.applies(sid))
        frozen = "".join(f'<li><a href="/tests/scenario/{e(sid)}/responses?tool={e(t)}">'
                         f"{e(t)}</a>: {_answers(r)}</li>"
                         for t, r in found.tool_responses.items())
        offered = sorted(offered_tools(found.context) - set(found.tool_responses))
        add_tool = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in offered)
        v = found.visitor
        body = (
            f'<p class="note">{e(scenario_file(found))}, line {found.line}.</p>'
            f'<form method="post" class="stack" action="/tests/scenario/{e(sid)}">'
            + revs(data.revisions, [scenario_file(found)])
            + field("id", "Name (id)", found.id) + field("group", "Group", found.group or "")
            + "<h3>Visitor instructions</h3>"
            + "".join(area(f"visitor.{k}", k.replace("_", " "), getattr(v, k))
                      for k in field_edits.VISITOR_KEYS)
            + area("opening", "Opening message (empty: the visitor writes it)",
                    found.opening or "")
            + f'<h3>Criteria</h3><div id="criteria">{criteria}</div>'
            + f'<h3>Expected actions</h3><div id="expected">{expected.fieldsets(found)}</div>'
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
        change = field_edits.add_criterion(given(form, "statement"), enforcement)
        return await self._save(form, {scenario_file(found): edits.on_entry(sid, change)},
                                f"/tests/scenario/{sid}", f"A criterion was added to {sid}.")

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
                                       "applies_to": field_edits.parse_applies_to(
                                           given(form, "applies_to"))})
            elif (at := whole_number(index)) is not None:
                edit = edits.on_index(at, None if text(form, "remove") else
                                      field_edits.shared_fields(text(form, "statement"),
                                                                enforcement,
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
                + field("statement", "Statement" if x else "New shared criterion", statement)
                + '<label>Enforcement</label>' + enforcement_select("enforcement", enforcement)
                + field("applies_to", "Applies to (all, or scenario ids separated by commas)",
                         applies)
                + '<button type="submit">' + ("Save" if x else "Add") + "</button>"
                + ('<button type="submit" name="remove" value="1" class="plain">Remove</button>'
                   if x else "") + "</form></section>")
        return page("tests", "Shared criteria", "".join(forms))


def _answers(frozen: ToolResponses) -> str:
    """How a tool's frozen responses answer, in a few words."""
    parts = [f"{len(frozen.branches)} branch(es)"] if frozen.branches else []
    if frozen.answers():
        n = len(frozen.sequence)
        parts.append("a static response" if frozen.response is not None else
                     f"a sequence of {n}")
    return ", then ".join(parts)
