"""A scenario's frozen tool responses in the Tests tab, one result at a time.

The page shows how the tool answers (its branches in order, with their conditions, delays,
states and exhaustion, then its default) and edits one result: a response of the default, of a
branch, or of a sequence, as a typed form built from the tool's result schema or as raw JSON.
The save changes that result in the YAML and nothing else (frozen_edits.tool_result). A value
written as an expression (`{{ args.slug }}`) is shown as written and kept until the author
ticks "a fixed value instead". The workspace writes no new condition, branch or sequence: a
tool with no frozen responses gets a static one. Beside the editor, the examples to start from
(examples.py): the tool's declared results and the responses other cases and scenarios give it,
each checked against the tool's contract today.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.capabilities import REGISTRY, Tool
from evals.load.expressions import has_expressions
from evals.load.responses import Answers, ToolResponses
from evals.load.scenarios import Scenario
from evals.workspace import edits
from evals.workspace.examples import Example, examples_for
from evals.workspace.form_values import json_text, parse_json_object, whole_number
from evals.workspace.forms import Loaded, Tab, given, load, scenario_file, text
from evals.workspace.frozen_edits import At, tool_result, unfreeze
from evals.workspace.layout import e, hidden, page, refused, revs
from evals.workspace.refusals import Invalid

_SIMPLE = {"string": "text", "integer": "number", "number": "number", "boolean": "checkbox"}
EXHAUSTED = ("error", "repeat_last")


class ResponsesTab(Tab):
    def routes(self) -> list[Route]:
        return [Route("/tests/scenario/{id}/responses", self.responses,
                      methods=["GET", "POST"])]

    async def responses(self, request: Request) -> Response:
        sid = request.path_params["id"]
        tool_name = request.query_params.get("tool", "")
        data = await run_in_threadpool(load, self.sources)
        found = next((s for s in data.scenarios if s.id == sid), None)
        tool = REGISTRY.all_tools().get(tool_name)
        if found is None or tool is None or tool.result is None:
            return refused(f"no scenario {sid!r} or no tool {tool_name!r}", 404)
        back = f"/tests/scenario/{sid}/responses?tool={tool_name}"
        frozen = found.tool_responses.get(tool_name)
        if request.method == "POST":
            return await self._post(await self._form(request), found, tool, back)
        at = At.parse(request.query_params.get("at", "")) or _first(frozen)
        current = _result(frozen, at)
        if current is False:
            return refused(f"{tool_name} in {sid}: no such result here ({at.label()})", 404,
                           back)
        examples = examples_for(tool, _others(data, sid))
        chosen = request.query_params.get("example", "")
        start = current
        n = whole_number(chosen)
        if n is not None and n < len(examples) and examples[n].offered:
            start = examples[n].response
        return _page(data, found, tool, frozen, at, current, start, examples, back)

    async def _post(self, form: FormData, found: Scenario, tool: Tool, back: str) -> Response:
        sid, mode = found.id, text(form, "mode")
        if text(form, "contract") != tool.contract():
            return refused(f"{tool.name}'s contract changed since the form was opened (it is"
                           f" {tool.contract()} now); reload", 409, back)
        if mode == "unfreeze":
            return await self._save(
                form, {scenario_file(found): edits.on_entry(sid, unfreeze(tool.name))},
                f"/tests/scenario/{sid}", f"{tool.name} in {sid} answers for real again.")
        at = At.parse(text(form, "at") or "")
        if at is None:
            return refused("which response? (at: default-1, branch-2-1, default-new)", 400,
                           back)
        exhausted = text(form, "exhausted") or "error"
        if exhausted not in EXHAUSTED:
            return refused("exhausted is error or repeat_last", 422, back)
        assert tool.result is not None
        try:
            response = (None if mode == "remove" else
                        parse_json_object(text(form, "raw") or "", "raw JSON")
                        if mode == "raw" else typed_result(form, tool.result.model_json_schema()))
        except Invalid as exc:
            return refused(str(exc), 422, back)
        if response is None and mode != "remove":
            return refused("the new response is empty: fill it in (or cancel)", 422, back)
        if response is None and at.index is None:
            return refused("which response? a new one cannot be removed", 400, back)
        change = tool_result(tool.name, tool.contract(), at, response, exhausted)
        again = back if at.index is None or response is None else f"{back}&at={at.key()}"
        done = "removed" if response is None else "saved"
        return await self._save(form, {scenario_file(found): edits.on_entry(sid, change)},
                                again, f"{tool.name} in {sid}: {at.label()} {done}.")


def _first(frozen: ToolResponses | None) -> At:
    """The result the page opens on: the default's first, else the first branch's; a tool with
    no frozen responses: a new (static) one."""
    if frozen is None:
        return At()
    return At(None if frozen.answers() else 0, 0)


def _unit(frozen: ToolResponses, branch: int | None) -> Answers | None:
    if branch is None:
        return frozen if frozen.answers() else None
    return frozen.branches[branch] if branch < len(frozen.branches) else None


def _result(frozen: ToolResponses | None, at: At) -> dict[str, Any] | None | bool:
    """The response at `at` as the file writes it; None for a new one; False: no such result
    (or a new one where the workspace adds none)."""
    if frozen is None:
        return None if at == At() else False
    unit = _unit(frozen, at.branch)
    if unit is None:
        return False
    if at.index is None:
        return None if unit.responses else False  # a static response stays static
    return unit.sequence[at.index] if at.index < len(unit.sequence) else False


def _others(data: Loaded, sid: str) -> list[tuple[str, dict[str, ToolResponses]]]:
    """Every other scenario's and every case's frozen responses, labelled."""
    return ([(f"scenario {s.id} ({s.where})", s.tool_responses)
             for s in data.scenarios if s.id != sid]
            + [(f"case {c.id} ({c.where})", c.tool_responses) for c in data.cases])


# the page ---------------------------------------------------------------------------------------

def _page(data: Loaded, found: Scenario, tool: Tool, frozen: ToolResponses | None,
          at: At, current: dict[str, Any] | None | bool, start: Any,
          examples: list[Example], back: str) -> Response:
    assert tool.result is not None
    sid, schema = found.id, tool.result.model_json_schema()
    rev = revs(data.revisions, [scenario_file(found)]) + hidden("contract", tool.contract())
    stale = (f'<p class="error">These responses were written for contract {e(frozen.contract)};'
             f" the tool's is now {e(tool.contract())}. Saving a result records today's, and"
             " every response of the tool is then checked against it.</p>"
             if frozen and frozen.contract != tool.contract() else "")
    new_tool = frozen is None
    what = ("A new static response: the first call gets it, and what the next get is set"
            " below." if new_tool else
            f"Editing {at.label()}.")
    exhaust = ('<label for="f-exhausted">After the first call</label><select name="exhausted"'
               ' id="f-exhausted"><option value="error">error (the tool fails)</option>'
               '<option value="repeat_last">repeat_last (the same response again)</option>'
               "</select>" if new_tool else "")
    existing = isinstance(current, dict)
    editor = (
        f'<h3 id="editor">{e(what)}</h3>'
        f'<form method="post" class="stack" action="{e(back)}">{rev}'
        + hidden("mode", "typed") + hidden("at", at.key())
        + result_fields(start if isinstance(start, dict) else None, schema, existing)
        + exhaust + '<button type="submit">Save this response</button>'
        f'<a class="button plain" href="/tests/scenario/{e(sid)}">Cancel</a></form>'
        "<details><summary>Edit it as raw JSON</summary>"
        f'<form method="post" class="stack" action="{e(back)}">{rev}'
        + hidden("mode", "raw") + hidden("at", at.key())
        + '<textarea class="json" name="raw" aria-label="raw JSON">'
        + e(json.dumps(start or {}, indent=2, ensure_ascii=False)) + "</textarea>"
        + exhaust + '<button type="submit">Save the JSON</button></form></details>')
    if existing and _removable(frozen, at):
        editor += (f'<form method="post" action="{e(back)}">{rev}{hidden("mode", "remove")}'
                   f'{hidden("at", at.key())}<button type="submit" class="plain">Remove this'
                   " response from its sequence</button></form>")
    body = (
        f'{stale}<p class="note">What {e(tool.name)} answers in a conversation of {e(sid)}'
        " instead of running: the branches in order (the first whose conditions fit the call"
        " answers), else the default. Each result is edited on its own; conditions,"
        " expressions, delays, states, exhaustion and order stay as the file writes them (new"
        " conditions and sequences are written in the file). A response fits the tool's"
        " result schema, or is an error.</p>"
        + (_structure(frozen, at, back) if frozen else "")
        + editor + _examples(examples, at, back)
        + (f'<form method="post" action="{e(back)}">{rev}{hidden("mode", "unfreeze")}'
           '<button type="submit" class="plain">Unfreeze (use the real tool)</button>'
           "</form>" if frozen else "")
        + "<details><summary>Result schema</summary>"
        + f'<pre class="log">{e(json.dumps(schema, indent=2))}</pre></details>')
    return page("tests", f"{tool.name} in {sid}", body)


def _removable(frozen: ToolResponses | None, at: At) -> bool:
    unit = _unit(frozen, at.branch) if frozen else None
    return unit is not None and len(unit.responses) >= 2


def _structure(frozen: ToolResponses, at: At, back: str) -> str:
    """How the tool answers, read-only but for the links to each result's editor."""
    units: list[tuple[int | None, Answers]] = [(i, b) for i, b in enumerate(frozen.branches)]
    if frozen.answers():
        units.append((None, frozen))
    items = []
    for branch, answers in units:
        conditions = []
        if branch is not None:
            b = frozen.branches[branch]
            if b.arguments:
                conditions.append("when the arguments fit"
                                  f" <code>{e(_compact(b.arguments))}</code>")
            if b.state is not None:
                conditions.append(f"in state <code>{e(b.state)}</code>")
        if answers.delay_s is not None:
            conditions.append(f"waits {answers.delay_s:g} s")
        for key, name in answers.states().items():
            conditions.append(f"{key.replace('_', ' ')} <code>{e(name)}</code>")
        if answers.responses:
            conditions.append(f"a sequence, then {e(answers.exhausted)}")
        elif answers.exhausted != "error":
            conditions.append(f"then {e(answers.exhausted)}")
        title = ("Default (when no branch fits)" if branch is None and frozen.branches else
                 "Default" if branch is None else f"Branch {branch + 1}")
        results = []
        for n, response in enumerate(answers.sequence):
            here = At(branch, n)
            mark = ' aria-current="true" class="on"' if here == at else ""
            kind = " (expressions)" if has_expressions(response) else ""
            results.append(f'<li{mark}><a href="{e(back)}&amp;at={here.key()}#editor">'
                           f"Response {n + 1}</a>{kind}"
                           f' <code class="preview">{e(_compact(response)[:160])}</code></li>')
        if answers.responses:
            results.append(f'<li><a href="{e(back)}&amp;at={At(branch).key()}#editor">'
                           "Add a response at the end of this sequence</a></li>")
        items.append(f"<li><strong>{title}</strong>"
                     + (f' <span class="note">{" · ".join(conditions)}</span>'
                        if conditions else "") + f"<ul>{''.join(results)}</ul></li>")
    return f'<h3>How it answers</h3><ol class="answers">{"".join(items)}</ol>'


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _examples(examples: list[Example], at: At, back: str) -> str:
    if not examples:
        return ("<h3>Examples</h3><p class=\"note\">None: the tool declares no example result"
                " and no other case or scenario freezes it.</p>")
    rows = []
    for n, x in enumerate(examples):
        also = f" (and {x.also} more)" if x.also else ""
        why = "changed contract" if x.changed_contract else "does not fit"
        status = ('<span class="ok">fits today\'s contract</span>' if x.offered else
                  f'<span class="error">{why}</span>')
        use = (f' <a href="{e(back)}&amp;at={at.key()}&amp;example={n}#editor">Start from'
               " this</a>" if x.offered else
               f'<div class="note">{e(x.problem)}. Not offered.</div>')
        rows.append(f"<li><details><summary>{e(x.source)}{also} — {status}</summary>"
                    f'<pre class="log">{e(json.dumps(x.response, indent=1, ensure_ascii=False))}'
                    f"</pre></details>{use}</li>")
    return ('<h3>Examples</h3><p class="note">Results to start from: those the tool declares,'
            " and those other cases and scenarios give it, checked against the tool's contract"
            ' today. "Start from this" fills the editor; nothing is saved until you save.</p>'
            f'<ul class="examples">{"".join(rows)}</ul>')


# the typed form of one result ---------------------------------------------------------------------

def schema_types(spec: dict[str, Any]) -> list[Any]:
    return [spec.get("type"), *(x.get("type") for x in spec.get("anyOf", []))]


def input_kind(spec: dict[str, Any]) -> str | None:
    """A simple field's input type; None for one edited as JSON."""
    types = schema_types(spec)
    simple = [t for t in types if t in _SIMPLE]
    return _SIMPLE[simple[0]] if len(simple) == 1 and all(
        t in (simple[0], "null", None) for t in types) else None


def result_fields(response: dict[str, Any] | None, schema: dict[str, Any], existing: bool
                  ) -> str:
    """One response as form fields: an error, or a field per result property. A simple field
    holding an expression is shown as written and kept unless "a fixed value instead" is
    ticked; a JSON field shows its expressions in its text, kept unless edited; keys the schema
    does not name ride along unchanged."""
    response = response or {}
    properties = schema.get("properties", {})
    error = response.get("error", "") if set(response) == {"error"} else ""
    rows = [_input("r.error", "error (instead of a result: the tool failed)", "text", error)]
    for name, spec in properties.items():
        value = response.get(name) if not error else None
        kind = input_kind(spec)
        label = f"{name}{' *' if name in schema.get('required', []) else ''}"
        if kind is not None and value is not None and has_expressions(value):
            rows.append(_expression(name, label, value, kind))
        elif kind == "checkbox":
            rows.append(f'<label><input type="checkbox" name="r.{e(name)}" value="true"'
                        f'{" checked" if value else ""}> {e(label)}</label>')
        elif kind is not None:
            rows.append(_input(f"r.{name}", label, kind, "" if value is None else value))
        else:
            shown = "" if value is None else json.dumps(value, indent=1, ensure_ascii=False)
            kept = (" (JSON; its {{ args.… }} expressions stay as written unless you change"
                    " them)" if value is not None and has_expressions(value) else " (JSON)")
            rows.append(f'<label for="f-r.{e(name)}">{e(label)}{e(kept)}</label><textarea'
                        f' class="json" id="f-r.{e(name)}" name="r.{e(name)}">{e(shown)}'
                        "</textarea>")
    extra = {k: v for k, v in response.items() if k not in properties and not error}
    return (f'<fieldset class="response"><legend>Result</legend>{"".join(rows)}'
            + hidden("r.keys", json.dumps(sorted(response)))
            + (hidden("r.existing", "1") if existing else "")
            + (hidden("r.extra", json.dumps(extra)) if extra else "") + "</fieldset>")


def _input(name: str, label: str, kind: str, value: Any) -> str:
    return (f'<label for="f-{e(name)}">{e(label)}</label><input type="{kind}"{_step(kind)}'
            f' id="f-{e(name)}" name="{e(name)}" value="{e(value)}">')


def _step(kind: str | None) -> str:
    return ' step="any"' if kind == "number" else ""


def _expression(name: str, label: str, value: Any, kind: str) -> str:
    """A simple field written with expressions (which its input could not hold): shown as
    written and kept, unless the author ticks "a fixed value instead" and gives one."""
    written = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    fixed = (f'<input type="checkbox" name="r.{e(name)}" value="true"'
             f' aria-label="{e(name)}: fixed value">' if kind == "checkbox" else
             f'<input type="{kind}"{_step(kind)} name="r.{e(name)}"'
             f' aria-label="{e(name)}: fixed value">')
    return (f'<div class="expression"><label>{e(label)} <span class="note">(an expression over'
            f' the call&#39;s arguments, kept as written)</span></label><code>{e(written)}'
            f"</code>{hidden(f'r.{name}.expr', json.dumps(value))}"
            f'<label class="choices"><input type="checkbox" name="r.{e(name)}.fixed"'
            f' value="1"> a fixed value instead:</label>{fixed}</div>')


def typed_result(form: FormData, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The typed form back as a response; None when a new one was left empty. A field the
    response did not have and the form left empty stays absent (so an unchanged form changes
    nothing); an expression not replaced by a fixed value is kept as written."""
    error = given(form, "r.error")
    if error:
        return {"error": error}
    keys = json_text(text(form, "r.keys") or "[]", "r.keys")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise Invalid("r.keys: the names of the result's keys, as a JSON list of text")
    had = set(keys)
    response: dict[str, Any] = {}
    filled = False
    for name, spec in schema.get("properties", {}).items():
        raw = (text(form, f"r.{name}") or "").replace("\r\n", "\n")
        written = text(form, f"r.{name}.expr")
        if written is not None and not text(form, f"r.{name}.fixed"):
            response[name] = json_text(written, f"{name} as written")
            filled = True
            continue
        kind, nullable = input_kind(spec), "null" in schema_types(spec)
        if kind == "checkbox":
            if raw or name in had:
                response[name] = bool(raw)
            filled = filled or bool(raw)
        elif kind == "number":
            if raw.strip():
                response[name] = _number(raw.strip(), "integer" in schema_types(spec), name)
                filled = True
            elif nullable and name in had:
                response[name] = None
        elif kind == "text":
            if raw or name in had:
                response[name] = None if raw == "" and nullable else raw
            filled = filled or bool(raw)
        elif raw.strip():
            response[name] = json_text(raw, name)
            filled = True
    extra = text(form, "r.extra")
    if extra:
        response.update(parse_json_object(extra, "the result's other keys"))
    return response if filled or text(form, "r.existing") else None


def _number(raw: str, integer: bool, what: str) -> int | float:
    try:
        return int(raw) if integer else float(raw)
    except ValueError:
        raise Invalid(f"{what}: {'a whole number' if integer else 'a number'}") from None
