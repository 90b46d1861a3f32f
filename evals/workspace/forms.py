"""What the tabs that edit the case and scenario files share: the files as loaded, the forms'
fields, frozen responses as typed forms, and the save (revision-checked, all-or-nothing,
validated by the loaders, answered with the YAML diff it made)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from evals.load.cases import Case, load_cases_by_file
from evals.load.scenarios import Scenario, Shared, load_scenarios
from evals.load.yamlfile import YamlFileError
from evals.workspace import edits
from evals.workspace.layout import diff_html, e, hidden, page, refused
from evals.workspace.sources import Edit, Invalid, Sources, Writer, WriteRefused

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
                    what: str) -> Response:
        try:
            diffs = await run_in_threadpool(self.writer.commit, parse_revs(form), edits_)
        except WriteRefused as exc:
            return refused(str(exc), exc.status, back)
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


def schema_types(spec: dict[str, Any]) -> list[Any]:
    return [spec.get("type"), *(x.get("type") for x in spec.get("anyOf", []))]


def input_kind(spec: dict[str, Any]) -> str | None:
    """A simple field's input type; None for one edited as JSON."""
    types = schema_types(spec)
    simple = [t for t in types if t in _SIMPLE]
    return _SIMPLE[simple[0]] if len(simple) == 1 and all(
        t in (simple[0], "null", None) for t in types) else None


def typed_response(n: int, response: dict[str, Any] | None, schema: dict[str, Any]) -> str:
    """One response as a fieldset: an error, or a field per result property (keys the schema
    does not name ride along unchanged)."""
    response = response or {}
    properties = schema.get("properties", {})
    error = response.get("error", "") if set(response) == {"error"} else ""
    rows = [f'<legend>Response {n + 1}{" (new)" if not response else ""}</legend>',
            field(f"r{n}.error", "error (instead of a result: the tool failed)", error)]
    for name, spec in properties.items():
        value = response.get(name) if not error else None
        kind = input_kind(spec)
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


def typed_responses(form: FormData, schema: dict[str, Any]) -> list[dict[str, Any]]:
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
            kind, nullable = input_kind(spec), "null" in schema_types(spec)
            what = f"response {n + 1}: {name}"
            if kind == "checkbox":
                response[name] = bool(raw)
                filled = filled or bool(raw)
            elif kind == "number":
                if raw.strip():
                    response[name] = number(raw.strip(), "integer" in schema_types(spec), what)
                    filled = True
                elif nullable:
                    response[name] = None
            elif kind == "text":
                response[name] = None if raw == "" and nullable else raw
                filled = filled or bool(raw)
            elif raw.strip():
                response[name] = json_value(raw, what)
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


def number(raw: str, integer: bool, what: str) -> int | float:
    try:
        return int(raw) if integer else float(raw)
    except ValueError:
        raise Invalid(f"{what}: {'a whole number' if integer else 'a number'}") from None


def json_value(raw: str, what: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise Invalid(f"{what}: not JSON: {exc.msg}") from exc


def raw_responses(raw: str) -> list[dict[str, Any]]:
    value = json_value(raw, "raw JSON")
    if not isinstance(value, list) or not value:
        raise Invalid("raw JSON: a list of responses, [{...}, ...], with at least one")
    return [edits.parse_json_object(json.dumps(v), f"response {n + 1}")
            for n, v in enumerate(value)]


