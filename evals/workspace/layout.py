"""One layout for every tab: a header with the tabs, then the page in a column at most
1440 px wide with the same gutters everywhere; tables scroll inside themselves, so no page
scrolls sideways at 390 px."""

from __future__ import annotations

import html
from typing import Any

from starlette.responses import HTMLResponse

from evals.report.html import BAR_STYLE, STYLE

TABS = (("overview", "/", "Overview"), ("results", "/results", "Results"),
        ("matrix", "/matrix", "Matrix"), ("online", "/online", "Online"),
        ("tests", "/tests", "Tests"),
        ("labels", "/labels", "Labels"))
HEADERS = {"content-security-policy": "default-src 'none'; style-src 'unsafe-inline';"
                                      " script-src 'self'; img-src 'self'; form-action 'self';"
                                      " frame-ancestors 'none'; base-uri 'none'",
           "x-content-type-options": "nosniff", "referrer-policy": "same-origin",
           "cache-control": "no-store", "x-frame-options": "DENY"}
CSS = STYLE + BAR_STYLE + """
header .wrap{display:flex;flex-wrap:wrap;gap:6px 18px;align-items:baseline}
nav.tabs{display:flex;flex-wrap:wrap;gap:2px 14px;min-width:0;max-width:100%}
nav.tabs a{color:#cfe0f5;text-decoration:none;font-weight:600}
nav.tabs a.on{color:#fff;border-bottom:2px solid #fff}
main.wrap{padding-bottom:40px}
section.panel{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;
margin:12px 0}
form.stack label{display:block;margin:8px 0 2px;font-weight:600}
input[type=text],input[type=number],textarea,select{width:100%;max-width:100%;font:inherit;
padding:5px 6px;border:1px solid #bbb;border-radius:4px;background:#fff}
textarea{min-height:4.5em} textarea.json{font-family:ui-monospace,monospace;min-height:9em}
input[type=number]{max-width:8em}
button,.button{font:inherit;padding:6px 14px;border-radius:4px;border:1px solid #1d3557;
background:#1d3557;color:#fff;cursor:pointer;text-decoration:none;display:inline-block;
margin:8px 8px 0 0} .button.plain,button.plain{background:#fff;color:#1d3557}
.row{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:flex-start}
.row>*{flex:1 1 220px;min-width:0}
form.stack .choices label,form.stack label.choices,.choices label{display:inline-block;
font-weight:400;margin:2px 14px 2px 0} fieldset{border:1px solid #ccc;border-radius:6px;
margin:10px 0;min-width:0} legend{font-weight:600}
.criterion>div:first-child{flex:3 1 300px}
.note{color:#555} .error{color:#b3261e;white-space:pre-wrap;overflow-wrap:anywhere}
pre.diff,pre.log{background:#111;color:#eee;padding:10px;border-radius:6px;overflow-x:auto;
max-width:100%;white-space:pre} .add{color:#8fdf8f} .del{color:#ff9c9c}
.counts span{margin-right:14px;font-weight:600}
table.list{width:100%;border-collapse:collapse;display:table;table-layout:fixed}
table.list td{padding:6px;border-bottom:1px solid #e4e4e4;vertical-align:top;
overflow-wrap:anywhere} table.list td.pick{width:2.2em}
table.list details summary{padding:0;display:list-item}
.rate{display:flex;align-items:center;gap:6px} .rate .bar{flex:1 1 auto;min-width:40px}
.rate .fill{background:#2a7d2a}
[hidden]{display:none!important}
code{overflow-wrap:anywhere} .selector>div.form{flex:0 1 9em} .selector{margin-bottom:10px}
fieldset.action .selectors{margin:6px 0} fieldset.action .selectors p{margin:6px 0 2px}
.expression code{display:block;background:#f3f0ff;padding:4px 6px;border-radius:4px}
ol.answers li.on{background:#fff1a8} ul.examples li{margin:6px 0} .ok{color:#2a7d2a}
kbd{font-family:ui-monospace,monospace;border:1px solid #bbb;border-radius:3px;padding:0 4px;
background:#f6f6f6}
"""


def e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def page(tab: str, title: str, body: str, *, status: int = 200, refresh: str | None = None,
         script: bool = False) -> HTMLResponse:
    """A tab's page; `refresh` is an address to load again in two seconds (progress)."""
    tabs = "".join(f'<a href="{href}" class="{"on" if name == tab else ""}">{label}</a>'
                   for name, href, label in TABS)
    meta = f'<meta http-equiv="refresh" content="2; url={e(refresh)}">' if refresh else ""
    js = '<script src="/static/workspace.js" defer></script>' if script else ""
    return HTMLResponse(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{meta}<title>{e(title)} · eval workspace</title><style>{CSS}</style>{js}</head>"
        '<body><header><div class="wrap"><h1>Eval workspace</h1>'
        f'<nav class="tabs">{tabs}</nav></div></header>'
        f'<main class="wrap" id="main"><h2>{e(title)}</h2>{body}</main></body></html>',
        status_code=status, headers=HEADERS)


def refused(message: str, status: int, back: str = "/tests", tab: str = "tests"
            ) -> HTMLResponse:
    """A refused write: the reason, that nothing was written, and the way back (the form
    opened again shows the files as they are now)."""
    return page(tab, "Not saved", f'<p class="error">{e(message)}</p><p>Nothing was written.'
                f' <a href="{e(back)}">Open the form again</a> (it shows the files as they are'
                " now).</p>", status=status)


def hidden(name: str, value: Any) -> str:
    return f'<input type="hidden" name="{e(name)}" value="{e(value)}">'


def revs(revisions: dict[str, str], files: list[str]) -> str:
    """The revision of each file a form will touch."""
    return "".join(hidden("rev", f"{f}@{revisions[f]}") for f in files)


def diff_html(diffs: dict[str, str]) -> str:
    out = []
    for name, text in diffs.items():
        lines = []
        for line in text.splitlines():
            cls = "add" if line.startswith("+") and not line.startswith("+++") else \
                "del" if line.startswith("-") and not line.startswith("---") else ""
            lines.append(f'<span class="{cls}">{e(line)}</span>' if cls else e(line))
        out.append(f"<h3>{e(name)}</h3><pre class=\"diff\">" + "\n".join(lines) + "</pre>")
    return "".join(out) or "<p>No change: the files already said that.</p>"
