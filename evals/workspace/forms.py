"""What the tabs that edit the case and scenario files share: the files as loaded, the forms'
fields, frozen responses as typed forms, and the save (revision-checked, all-or-nothing,
validated by the loaders, answered with the YAML diff it made)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from evals.load.cases import Case, load_cases_by_file
from evals.load.scenarios import Scenario, Shared, load_scenarios
from evals.load.yamlfile import YamlFileError
from evals.workspace import edits
from evals.workspace.entries import Edit
from evals.workspace.layout import diff_html, e, page, refused
from evals.workspace.refusals import Invalid, WriteRefused
from evals.workspace.sources import Sources, Writer

MAX_FORM_FIELDS = 2000
ENFORCEMENT = ("required", "informational")


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
        scenarios, shared = load_scenarios(sources.scenarios,
                                           case_ids={c.id: c.where for c in cases},
                                           photos_dir=sources.photos)
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




class Tab:
    """What a tab that edits the files shares: the writer, the form, the save."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.writer = Writer(sources)

    async def _form(self, request: Request) -> FormData:
        return await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)

    async def _save(self, form: FormData, edits_: dict[str, Edit], back: str,
                    what: str, review: str | None = None) -> Response:
        """Commit the edits; a refusal names why (`review`, when given, says what to review
        before the loader's message of an edit it refused)."""
        try:
            diffs = await run_in_threadpool(self.writer.commit, parse_revs(form), edits_)
        except WriteRefused as exc:
            why = f"{review}\n{exc}" if review and isinstance(exc, Invalid) else str(exc)
            return refused(why, exc.status, back)
        return page("tests", "Saved", f"<p>{e(what)} The change, for review as a diff:</p>"
                    f"{diff_html(diffs)}<p><a href=\"{e(back)}\">Back to the form</a> ·"
                    ' <a href="/tests">All tests</a></p>')


def each(ids: list[str], change: edits.Change) -> Edit:
    wanted = [edits.on_entry(i, change) for i in ids]

    def edit(entries: list[str]) -> list[str]:
        for one in wanted:
            entries = one(entries)
        return entries
    return edit


def row(kind: str, tid: str, file: str, group: str | None, text_: str, criteria: str,
         href: str) -> str:
    words = " ".join([tid, file, group or "", text_]).lower()
    return (f'<tr data-search="{e(words)}"><td class="pick"><input type="checkbox"'
            f' name="pick" form="pick" value="{e(tid)}" aria-label="select {e(tid)}"></td><td>'
            f'<details><summary><a href="{e(href)}" class="id">{e(tid)}</a> <span'
            f' class="note">{kind} · {e(file)}{" · " + e(group) if group else ""}</span>'
            f"</summary><p>{e(text_)}</p>{criteria}</details></td></tr>")


def case_criteria(c: Case) -> str:
    items = [f"<li>{e(k.kind)} <span class=\"note\">(structural)</span></li>"
             for k in c.structural()]
    if c.rubric:
        items.append(f"<li>{e(c.rubric)} <span class=\"note\">(judged)</span></li>")
    if c.must_not:
        items.append(f"<li>must not: {e(c.must_not)} <span class=\"note\">(judged)</span></li>")
    return f"<ul>{''.join(items)}</ul>"


def field(name: str, label: str, value: str) -> str:
    return (f'<label for="f-{e(name)}">{e(label)}</label><input type="text" id="f-{e(name)}"'
            f' name="{e(name)}" value="{e(value)}">')


def area(name: str, label: str, value: str) -> str:
    return (f'<label for="f-{e(name)}">{e(label)}</label><textarea id="f-{e(name)}"'
            f' name="{e(name)}">{e(value)}</textarea>')


def enforcement_select(name: str, value: str) -> str:
    return (f'<select name="{e(name)}" aria-label="enforcement">'
            + "".join(f'<option{" selected" if x == value else ""}>{x}</option>'
                      for x in ENFORCEMENT) + "</select>")
