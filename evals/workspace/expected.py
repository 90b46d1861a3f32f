"""A scenario's expected actions in the Tests tab: shown apart from its criteria and edited in
the scenario's form, so that one save stages criteria and expected actions together and the
scenario loader checks them as the file would be after all of it.

Each action is a tool and its argument and result selectors (evals/checks/selectors.py), one
row per selector: the field, its form (is, in, contains, matches) and the value. A value is
read as JSON when it is JSON (7, true, null, ["a", "b"], "quoted text") and as text otherwise;
`contains` and `matches` take text as it is. What the author did not change keeps its text in
the file (expected_edits.expected_actions); a frozen response's edit never touches these.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import FormData

from app.capabilities import REGISTRY
from evals.checks.scenario import ExpectAction
from evals.checks.selectors import FORMS, SUFFIXES, fields_of, parse
from evals.load.context import offered_tools
from evals.load.scenarios import Scenario
from evals.load.yamlfile import MAX_DEPTH
from evals.workspace.expected_edits import Expected
from evals.workspace.form_values import whole_number, within_depth
from evals.workspace.forms import given, text
from evals.workspace.layout import e, hidden
from evals.workspace.refusals import Invalid

PARTS = (("arguments", "Arguments"), ("result", "Result"))
MARKER = "actions"  # the form carries expected actions (a form without them leaves them)


def summary(action: ExpectAction) -> str:
    """One line: the tool, then its argument and result selectors as the file writes them."""
    parts = [f"{part} {_flow(getattr(action, part))}" for part, _ in PARTS
             if getattr(action, part)]
    return " · ".join([action.tool, *parts])


def _flow(selectors: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}"
                           for k, v in selectors.items()) + "}"


def listed(found: Scenario) -> str:
    """The expected actions of a scenario's row in the list, apart from its criteria."""
    if not found.expect_actions:
        return ""
    items = "".join(f"<li><code>{e(summary(a))}</code></li>" for a in found.expect_actions)
    return f'<p class="note">Expected actions</p><ul class="expected">{items}</ul>'


def fieldsets(found: Scenario) -> str:
    """The scenario form's expected actions: one fieldset per action, then an empty one to
    add an action."""
    offered = offered_tools(found.context)
    blocks = [_action(n, a.tool, a.arguments, a.result, offered)
              for n, a in enumerate(found.expect_actions)]
    blocks.append(_action(len(found.expect_actions), None, {}, {}, offered))
    return (hidden(MARKER, len(found.expect_actions)) + '<p class="note">Tool calls the'
            " conversation must contain, each with selectors on its arguments and its result"
            " (every selector must fit one and the same call). Checked with the criteria above"
            " when you save: the scenario must load as the file would be after both.</p>"
            + "".join(blocks))


def _action(n: int, tool: str | None, arguments: dict[str, Any], result: dict[str, Any],
            offered: set[str]) -> str:
    tools = REGISTRY.all_tools()
    here = sorted(t for t in tools if t in offered)
    elsewhere = sorted(t for t in tools if t not in offered)

    def options(names: list[str]) -> str:
        return "".join(f"<option{' selected' if t == tool else ''}>{e(t)}</option>"
                       for t in names)

    none = '<option value="" label="(no new action)"></option>' if tool is None else ""
    select = (f'<select name="a{n}.tool" id="f-a{n}.tool">{none}'
              f'<optgroup label="Offered in this scenario">{options(here)}</optgroup>'
              f'<optgroup label="Not offered to this audience on this page">'
              f"{options(elsewhere)}</optgroup></select>")
    spec = tools.get(tool or "")
    rows = []
    for part, title in PARTS:
        model = (spec.args if part == "arguments" else spec.result) if spec else None
        known = sorted(fields_of(model)) if model else []
        data = f"fields-{n}-{part}"
        given_ = arguments if part == "arguments" else result
        lines = [_selector(n, part, i, key, value, data)
                 for i, (key, value) in enumerate(given_.items())]
        lines.append(_selector(n, part, len(given_), None, None, data))
        rows.append(f'<div class="selectors"><p><strong>{title}</strong>'
                    + (f' <span class="note">fields: {e(", ".join(known))}</span>'
                       if known else "") + "</p>"
                    + f'<datalist id="{data}">'
                    + "".join(f'<option value="{e(k)}"></option>' for k in known)
                    + "</datalist>" + "".join(lines) + "</div>")
    legend = f"Expected action {n + 1}" if tool else "Add an expected action"
    remove = (f'<label class="choices"><input type="checkbox" name="a{n}.remove" value="1">'
              " remove this expected action</label>" if tool else "")
    return (f'<fieldset class="action"><legend>{legend}</legend>'
            + (hidden(f"a{n}.index", n) if tool else "")
            + f'<label for="f-a{n}.tool">Tool</label>{select}{"".join(rows)}{remove}'
            "</fieldset>")


def _selector(n: int, part: str, i: int, key: str | None, value: Any, data: str) -> str:
    field, form = parse(key) if key else ("", "is")
    name = f"a{n}.{part}"
    what = f"action {n + 1} {part} selector {i + 1}" if key else f"action {n + 1} new {part}"
    forms = "".join(f"<option{' selected' if f == form else ''}>{f}</option>" for f in FORMS)
    return (f'<div class="row selector"><div><input type="text" name="{name}.field"'
            f' value="{e(field)}" list="{data}" placeholder="field" aria-label="{what}'
            f' field"></div><div class="form"><select name="{name}.form" aria-label="{what}'
            f' form">{forms}</select></div><div><input type="text" name="{name}.value"'
            f' value="{e(shown(value, form) if key else "")}" placeholder="value"'
            f' aria-label="{what} value"></div></div>')


def shown(value: Any, form: str) -> str:
    """A selector's value as the form shows it (and `read` reads it back the same)."""
    if isinstance(value, str):
        if form in ("contains", "matches"):
            return value
        try:
            json.loads(value)
        except ValueError:
            return value  # plain text: as it is
        return json.dumps(value, ensure_ascii=False)  # text that reads as JSON: quoted
    return json.dumps(value, ensure_ascii=False)


def read(raw: str, form: str) -> Any:
    """A selector's value from the form: text for contains and matches; otherwise JSON when it
    is JSON, else the text (an `in` list also as a, b, c)."""
    if form in ("contains", "matches"):
        return raw
    raw = raw.strip()
    what = "a selector's value"
    try:
        return within_depth(json.loads(raw), what)
    except RecursionError:
        raise Invalid(f"{what}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        pass
    if form == "in":
        return [read(item, "is") for item in raw.split(",") if item.strip()]
    return raw


def rows(form: FormData) -> list[tuple[int | None, Expected]] | None:
    """The expected actions the form leaves, each with its position in the file (None: new);
    None when the form carries none (then they are left as they are)."""
    if text(form, MARKER) is None:
        return None
    out: list[tuple[int | None, Expected]] = []
    n = 0
    while text(form, f"a{n}.tool") is not None:
        tool, index = given(form, f"a{n}.tool"), given(form, f"a{n}.index")
        if tool and not text(form, f"a{n}.remove"):
            out.append((whole_number(index),
                        Expected(tool, _selectors(form, n, "arguments"),
                                 _selectors(form, n, "result"))))
        elif not tool and index:
            raise Invalid(f"expected action {n + 1}: choose its tool (or tick remove)")
        n += 1
    return out


def changed(found: Scenario, rows_: list[tuple[int | None, Expected]] | None) -> bool:
    """Whether the form's expected actions say anything other than the scenario's."""
    now = [(i, Expected(a.tool, a.arguments, a.result))
           for i, a in enumerate(found.expect_actions)]
    return rows_ is not None and rows_ != now


def _selectors(form: FormData, n: int, part: str) -> dict[str, Any]:
    name = f"a{n}.{part}"
    fields, forms, values = ([str(v) for v in form.getlist(f"{name}.{x}")]
                             for x in ("field", "form", "value"))
    if not len(fields) == len(forms) == len(values):
        raise Invalid(f"expected action {n + 1}: each {part} selector needs a field, a form"
                      " and a value")
    out: dict[str, Any] = {}
    suffix = {form: s for s, form in SUFFIXES.items()}
    for field, how, raw in zip(fields, forms, values, strict=True):
        field = field.strip()
        if not field:
            continue
        if how not in FORMS:
            raise Invalid(f"expected action {n + 1}: {field}: the form is one of"
                          f" {', '.join(FORMS)}")
        key = field + suffix.get(how, "")
        if key in out:
            raise Invalid(f"expected action {n + 1}: {part}: {key} is given twice")
        out[key] = read(raw, how)
    return out
