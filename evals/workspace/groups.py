"""Groups on the Tests tab: a group set on the tests selected in the list, and a group renamed
with its members checked against the form's."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evals.workspace import field_edits
from evals.workspace.forms import Tab, case_file, each, field, given, load, scenario_file
from evals.workspace.layout import e, hidden, page, refused, revs
from evals.workspace.refusals import Conflict


class GroupsTab(Tab):
    def routes(self) -> list[Route]:
        return [Route("/tests/group", self.group, methods=["GET", "POST"]),
                Route("/tests/rename", self.rename, methods=["GET", "POST"])]

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
                    + field("group", "Group name", "")
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
        return await self._save(form, {f: each(ids, field_edits.set_group(group))
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
                    + field("to", "New name", name)
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
        return await self._save(form, {f: each(ids, field_edits.set_group(new))
                                       for f, ids in by_file.items()},
                                "/tests", f"The group {old!r} is now {new!r}.")
