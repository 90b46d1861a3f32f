"""A run as one self-contained HTML page (`python -m evals report [RUN] --html FILE`): every
case and conversation with its transcript, tool calls and checks; a failed check links to what
it is about (the sentence it quotes, the tool call it names, the cited PDF page), which the
page highlights. A stored run's page ends with the assessments stored beside it. No script,
no external file: CSS `:target` does the highlighting.

Everything shown is data from the run (model output included): it is escaped, never markup."""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evals.record.assessment import Assessment
from evals.record.comparison import Comparison
from evals.record.matrix import Matrix, Row
from evals.record.results import CHANNELS, Attempt, CaseResult, CheckResult, Status
from evals.record.run import RunRecord
from evals.record.transcript import Turn
from evals.report.assessments import assessments_html
from evals.report.attacks import attack_counts
from evals.report.attribution import headline
from evals.report.compare import by_item, reasons, statuses
from evals.report.console import cost_lines, totals_line
from evals.report.diff import diff_lines
from evals.report.matrix import calls, cell_text, money, seconds

# A check's reason quotes what it is about between curly quotes (“…”) or plain ones.
_QUOTED = re.compile(r"“([^”]{3,})”|\"([^\"]{3,})\"")
ORDER: tuple[Status, ...] = ("FAIL", "ERROR", "FLAKY", "UNDECIDED", "SKIPPED", "PASS")
_CITED_PAGE = re.compile(r"(https?://\S+?\.pdf)(?:#page=(\d+))?")

STYLE = """
*{box-sizing:border-box} body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#222;
background:#f6f6f3} .wrap{max-width:1440px;margin:0 auto;padding:0 clamp(12px,3vw,32px)}
header{background:#1d3557;color:#fff;padding:12px 0} header h1{font-size:1.2em;margin:0}
.totals{margin:12px 0;font-weight:600} .item{background:#fff;border:1px solid #ddd;
border-radius:6px;margin:8px 0} summary{cursor:pointer;padding:10px 12px;display:flex;
gap:10px;flex-wrap:wrap;align-items:baseline} .id{font-family:ui-monospace,monospace;
overflow-wrap:anywhere} .file{color:#666;font-size:.9em} .badge{font-weight:700;
min-width:6.5em} .PASS{color:#2a7d2a} .FAIL,.ERROR{color:#b3261e} .FLAKY,.UNDECIDED{color:#8a5a00}
.SKIPPED{color:#666} .body{padding:0 12px 12px} .turn{margin:6px 0;padding:8px 10px;
border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere} .user{background:#dde8f5}
.assistant{background:#fafafa;border:1px solid #e2e2e2} .call{font-family:ui-monospace,
monospace;font-size:.85em;white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f0ff;
padding:6px 8px;border-radius:6px;margin:4px 0} ul.checks{padding-left:1.2em}
.check.failed{color:#b3261e} .check.advisory{color:#8a5a00} .check.info{color:#555}
mark,.call:target,.turn:target,.cites:target{background:#fff1a8;outline:2px solid #e0b000}
h2{font-size:1.05em;margin:18px 0 6px} h3{font-size:1em;margin:12px 0 4px}
nav.filter a{margin-right:10px}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _check_class(c: CheckResult) -> str:
    if not c.required:
        return "check info"
    if not c.decided:
        return "check advisory"
    return "check" if c.passed else "check failed"


class _Evidence:
    """Anchors for what failed checks point at, numbered per attempt."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.marks: list[tuple[str, str]] = []  # (quoted text, anchor id)

    def anchor_for(self, check: CheckResult, attempt: Attempt) -> str | None:
        if check.passed and check.decided:
            return None
        if "cit" in check.kind and _has_citations(attempt):
            return f"{self.prefix}-cites"  # the citations, each linking to its PDF page
        for name in (c.name for c in attempt.tool_calls):
            if re.search(rf"\b{re.escape(name)}\b", check.kind + " " + check.reason):
                index = next(i for i, c in enumerate(attempt.tool_calls) if c.name == name)
                return f"{self.prefix}-call-{index}"
        quotes = [m.group(1) or m.group(2) for m in _QUOTED.finditer(check.reason)]
        if not quotes:
            return None
        anchor = f"{self.prefix}-q{len(self.marks)}"
        self.marks.append((max(quotes, key=len), anchor))  # the sentence, not just the name
        return anchor


def _marked(text: str, marks: list[tuple[str, str]], placed: set[str]) -> str:
    """The text escaped, each quoted passage found in it wrapped in a mark with its anchor
    (each anchor once on the page, marks never overlapping)."""
    spans: list[tuple[int, int, str]] = []
    for quoted, anchor in marks:
        at = text.find(quoted)
        end = at + len(quoted)
        if at >= 0 and anchor not in placed and \
                not any(at < e and s < end for s, e, _ in spans):
            spans.append((at, end, anchor))
            placed.add(anchor)
    out, pos = [], 0
    for start, end, anchor in sorted(spans):
        out += [_e(text[pos:start]), f'<mark id="{anchor}">', _e(text[start:end]), "</mark>"]
        pos = end
    out.append(_e(text[pos:]))
    return "".join(out)


def _has_citations(attempt: Attempt) -> bool:
    return bool(attempt.transcript.evidence) or bool(_CITED_PAGE.search(attempt.answer))


def web_link(url: str) -> str:
    """An address as a link when it is a web one (http or https); anything else (a
    `javascript:` address in a run's data) as text."""
    if re.match(r"https?://", url, re.IGNORECASE):
        return f'<a href="{_e(url)}">{_e(url)}</a>'
    return f"<code>{_e(url)}</code>"


def _citations(attempt: Attempt, prefix: str) -> str:
    links = []
    for doc, ev in attempt.transcript.evidence.items():
        links.append(f"<li>{web_link(doc)} — HTTP {_e(ev.status)}</li>")
    for m in _CITED_PAGE.finditer(attempt.answer):
        page = f"#page={m.group(2)}" if m.group(2) else ""
        links.append(f'<li>cited: <a href="{_e(m.group(1) + page)}">{_e(m.group(0))}</a></li>')
    return (f'<h3>Citations</h3><ul class="cites" id="{prefix}-cites">{"".join(links)}</ul>'
            if links else "")


def _attempt(result: CaseResult, n: int, attempt: Attempt, scope: str = "") -> str:
    prefix = f"{scope}{_slug(result.id)}-r{result.repetition}-a{n}"
    evidence = _Evidence(prefix)
    checks = []
    for c in attempt.checks:
        anchor = evidence.anchor_for(c, attempt)
        verdict = ("passed" if c.passed else "failed") if c.decided else \
            "advisory" if c.judge is not None and c.judge.verdict is not None else "undecided"
        if c.error:
            verdict = "error"
        text = f"{_e(c.kind)} — {verdict}: {_e(c.reason)}"
        if anchor:
            text = f'<a href="#{anchor}">{text}</a>'
        checks.append(f'<li class="{_check_class(c)}">{text}</li>')
    turns = attempt.turns or [Turn(role="user", content=result.prompt),
                              Turn(role="assistant", content=attempt.answer)]
    placed: set[str] = set()
    shown = "".join(
        f'<div class="turn {_e(t.role)}"><strong>{_e(t.role)}:</strong> '
        f'{_marked(t.content, evidence.marks, placed)}</div>' for t in turns)
    calls = "".join(
        f'<div class="call" id="{prefix}-call-{i}">{_e(c.name)}'
        f'({_e(json.dumps(c.arguments, ensure_ascii=False))}) → '
        f'{_e(json.dumps(c.result, ensure_ascii=False)[:2000])}</div>'
        for i, c in enumerate(attempt.tool_calls))
    error = f'<p class="check failed">error: {_e(attempt.error)}</p>' if attempt.error else ""
    if attempt.visitor_failed and attempt.visitor is not None:
        error += (f'<p class="check undecided">undecided: {_e(attempt.visitor.describe())}'
                  " (the checks below measured the simulator as much as the assistant)</p>")
    head = f"<h3>Attempt {n}</h3>" if len(result.attempts) > 1 else ""
    return (f"{head}{error}<h3>Conversation</h3>{shown}"
            + (f"<h3>Tool calls</h3>{calls}" if calls else "")
            + _citations(attempt, prefix)
            + f'<h3>Checks</h3><ul class="checks">{"".join(checks)}</ul>')


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def run_body(record: RunRecord, cases: list[CaseResult] | None = None, scope: str = "",
             spent: bool = True) -> str:
    """A run's evidence (its totals, then every case by status), for a page of its own or
    the workspace; `cases` narrows what is listed (a filter), never the totals; `scope`
    prefixes the anchors (two runs on one page); `spent` False leaves out what the command
    spent (a matrix's columns share one command, said once above them)."""
    shown = record.cases if cases is None else cases
    counts = Counter(r.status for r in shown)
    order = [st for st in ORDER if counts[st]]
    filters = " ".join(f'<a href="#{scope}{st}">{st} ({counts[st]})</a>' for st in order)
    sections = []
    for status in order:
        items = []
        for r in sorted((r for r in shown if r.status == status),
                        key=lambda r: (r.file, r.id, r.repetition)):
            body = (f"<p>skipped: {_e(r.skipped_reason)}</p>" if r.status == "SKIPPED" else
                    "".join(_attempt(r, n, a, scope) for n, a in enumerate(r.attempts, start=1)))
            opened = " open" if r.status in ("FAIL", "ERROR") else ""
            items.append(
                f'<details class="item" id="{scope}{_slug(r.id)}-r{r.repetition}"{opened}>'
                f'<summary><span class="badge {r.status}">{r.status}</span>'
                f'<span class="id">{_e(r.id)}</span><span class="file">{_e(r.file)}'
                f'{" · " + _e(r.group) if r.group else ""}'
                f'{f" · {len(r.attempts)} attempts" if len(r.attempts) > 1 else ""}</span>'
                f'</summary><div class="body">{body}</div></details>')
        sections.append(f'<h2 id="{scope}{status}">{status} ({counts[status]})</h2>'
                        + "".join(items))
    # What the command spent, each job's part; a record written before it was kept shows
    # its page as it always did.
    costs = "".join(f'<p class="totals">{_e(line)}</p>'
                    for line in cost_lines(record.cases, record.models.chat, record.spend)
                    ) if record.spend is not None and spent else ""
    return (f'<p class="totals">{_e(totals_line(record.cases))}</p>{costs}'
            f'{_attacks(record.cases)}'
            f'<nav class="filter">{filters}</nav>{"".join(sections)}')


def _attacks(results: list[CaseResult]) -> str:
    """The security suite's table, per channel (nothing when the run has no attack)."""
    rows = attack_counts(results)
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_e(CHANNELS[r.channel])}</td><td>{r.tried}</td>"
                   f"<td>{r.delivered}</td><td>{r.resisted}</td><td>{r.fell}</td>"
                   f"<td>{r.undecided}</td><td>{r.not_delivered}</td></tr>" for r in rows)
    return ('<table class="grid attacks"><caption>Attacks by channel</caption><tr>'
            "<th>channel</th><th>tried</th><th>delivered</th><th>resisted</th><th>fell</th>"
            f"<th>undecided</th><th>not delivered</th></tr>{body}</table>")


OUTCOMES = ("improved", "regressed", "unchanged", "uncertain")
BAR_STYLE = """
.bar{display:flex;height:14px;min-width:120px;background:#eee;border-radius:3px;overflow:hidden}
.bar span{display:block;height:100%} .improved{background:#2a7d2a} .regressed{background:#b3261e}
.unchanged{background:#9aa5b1} .uncertain{background:#e0b000} .legend span{margin-right:10px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
table.grid{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}
table.grid td,table.grid th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:left}
"""


def outcome_bar(counts: Mapping[str, int]) -> str:
    total = sum(counts.get(o, 0) for o in OUTCOMES) or 1
    parts = "".join(f'<span class="{o}" style="width:{100 * counts.get(o, 0) / total:.1f}%"'
                    f' title="{o}: {counts.get(o, 0)}"></span>' for o in OUTCOMES)
    return f'<div class="bar">{parts}</div>'


def comparison_body(result: Comparison, baseline: str, current: str) -> str:
    """A stored comparison: its verdict, a bar per file of improved, regressed, unchanged
    and uncertain cases, what changed for the moved ones' contexts (each shared change once,
    with its diff), and every item with its repetitions' statuses on each side and the reason
    an uncertain one is uncertain."""
    files: dict[str, Counter[str]] = {}
    file_of = {p.id: p.file for p in result.pairs}
    for case_id, outcome in result.cases.items():
        files.setdefault(file_of.get(case_id, "?"), Counter())[outcome] += 1
    legend = "".join(f'<span><i class="{o}"></i>{o} ({result.counts.get(o, 0)})</span>'
                     for o in OUTCOMES)
    rows = "".join(f"<tr><td>{_e(f)}</td><td>{outcome_bar(c)}</td><td>"
                   + " · ".join(f"{c[o]} {o}" for o in OUTCOMES if c[o]) + "</td></tr>"
                   for f, c in sorted(files.items()))
    listed = []
    for cid, outcome, ps in by_item(result):
        before, now = statuses(ps)
        whys = reasons(ps)
        listed.append(f'<tr><td class="id">{_e(cid)}</td><td>{_e(before)}</td>'
                      f'<td>{_e(now)}</td><td class="{outcome}-text">{_e(outcome)}'
                      f'{" (" + _e(whys) + ")" if whys else ""}</td></tr>')
    pairs = "".join(listed)
    p_value = f"p = {result.p_value:.3f}" if result.p_value is not None else "no test"
    return (f"<p>{_e(baseline)} → {_e(current)}</p>"
            f'<p class="totals">{_e(result.verdict)} ({p_value})</p>'
            f'<p class="legend">{legend}</p><h2>Per file</h2><table class="grid">'
            f"<tr><th>file</th><th>cases</th><th>counts</th></tr>{rows}</table>"
            + _attribution(result) + '<h2>Items</h2><table class="grid"><tr><th>item</th>'
            f"<th>before</th><th>now</th><th>outcome</th></tr>{pairs}</table>")


def _attribution(result: Comparison) -> str:
    """Why the moved items moved: a line per shared change, then its diff once."""
    out = []
    for group in result.attribution:
        diff = "\n".join(diff_lines(group.change))
        out.append(f"<p>{_e(headline(group))}</p>"
                   + (f'<div class="call">{_e(diff)}</div>' if diff else ""))
    return f"<h2>Why they moved</h2>{''.join(out)}" if out else ""


def page(title: str, body: str, extra_style: str = "") -> str:
    """A whole self-contained page: no script, no external file."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}{extra_style}</style></head><body>"
        f'<header><div class="wrap"><h1>{_e(title)}</h1></div></header>'
        f'<main class="wrap">{body}</main></body></html>')


def run_title(record: RunRecord) -> str:
    model = record.models.chat or "?"
    return f"Run {record.run_id or '(unstored)'} · {model} · {record.status}"


def render_run(record: RunRecord, assessments: Sequence[Assessment] = ()) -> str:
    """The whole page for one run, with the assessments stored beside it (rescores,
    re-judgings) after its own results."""
    # The grid's style only for a run with a table: other pages stay as they were.
    return page(run_title(record), run_body(record) + assessments_html(record, assessments),
                BAR_STYLE if attack_counts(record.cases) or assessments else "")


def render_comparison(cid: str, result: Comparison, baseline: RunRecord, current: RunRecord
                      ) -> str:
    """The whole page for a stored comparison: the paired outcomes, then both runs."""
    before, now = run_title(baseline), run_title(current)
    return page(f"Comparison {cid}",
                comparison_body(result, before, now)
                + f"<h2>Now: {_e(now)}</h2>" + run_body(current, scope="now-")
                + f"<h2>Before: {_e(before)}</h2>" + run_body(baseline, scope="before-"),
                BAR_STYLE)


def item_anchor(item_id: str, repetition: int = 1, scope: str = "") -> str:
    """The id of an item's evidence in a run's body (`run_body`)."""
    return f"{scope}{_slug(item_id)}-r{repetition}"


def matrix_table(m: Matrix, href: Callable[[str, str], str],
                 rows: Sequence[Row] | None = None) -> str:
    """The matrix's rows (all, or `rows`), a cell per version, each a link to `href(label,
    item id)`: that item's evidence in that column's run."""
    labels = m.labels
    head = "".join(f"<th>{_e(label)}{' (baseline)' if label == m.baseline else ''}</th>"
                   for label in labels)
    out = []
    for row in m.rows if rows is None else rows:
        cells = []
        for label in labels:
            c = row.cells.get(label)
            cells.append("<td>—</td>" if c is None else
                         f'<td><a class="badge {_e(c.status)}" href="{_e(href(label, row.id))}"'
                         f' title="{_e(" ".join(c.statuses))}">{_e(cell_text(c))}</a></td>')
        out.append(f'<tr><td class="id">{_e(row.id)}</td><td class="file">{_e(row.file)}'
                   f"</td>{''.join(cells)}</tr>")
    return (f'<table class="grid matrix"><tr><th>item</th><th>file</th>{head}</tr>'
            f"{''.join(out)}</table>")


def matrix_figures(m: Matrix) -> str:
    """Each column's figures, then each column against the baseline."""
    statuses = ("PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED")
    figures = "".join(
        f"<tr><td>{_e(c.label)}</td><td>{_e(c.ref)}</td>"
        + "".join(f"<td>{c.totals[st]}</td>" for st in statuses)
        + f"<td>{c.visitor_failed}</td><td>{_e(seconds(c.spend.p50_s))}</td>"
        f"<td>{_e(seconds(c.spend.p95_s))}</td><td>{_e(money(c.cost_usd))}</td>"
        f"<td>{_e(calls(c))}</td></tr>" for c in m.columns)
    versus = "".join(f'<div class="versus"><p>{_e(v.label)} vs {_e(m.baseline)}:'
                     f" {' · '.join(f'{n} {o}' for o, n in v.counts.items())}</p>"
                     f"{outcome_bar(v.counts)}<p>{_e(v.verdict)}</p></div>" for v in m.versus)
    return ('<h2>Columns</h2><table class="grid"><tr><th>version</th><th>model</th>'
            "<th>passed</th><th>flaky</th><th>failed</th><th>undecided</th><th>errored</th>"
            "<th>skipped</th><th>visitor failed</th><th>p50</th><th>p95</th><th>cost</th>"
            f"<th>calls</th></tr>{figures}</table><h2>Against the baseline</h2>{versus}")


def matrix_body(m: Matrix, records: Mapping[str, RunRecord]) -> str:
    """The matrix with every cell a link to that item's evidence in its column's run, below;
    the columns' figures; each column against the baseline; then each column's run."""
    scopes = {label: f"c{i}-" for i, label in enumerate(m.labels)}
    runs = "".join(f"<h2>{_e(label)}: {_e(run_title(records[label]))}</h2>"
                   + run_body(records[label], scope=scopes[label], spent=False)
                   for label in m.labels if label in records)
    first = next(iter(records.values()), None)
    spent = "".join(f'<p class="totals">{_e(line)}</p>' for line in cost_lines(
        first.cases, first.models.chat, first.spend)) if first and first.spend else ""
    return (matrix_table(m, lambda label, cid: "#" + item_anchor(cid, scope=scopes[label]))
            + matrix_figures(m)
            + (f"<h2>What the command spent</h2>{spent}" if spent else "") + runs)


def render_matrix(m: Matrix, records: Mapping[str, RunRecord]) -> str:
    """The whole page for a matrix: the table, then every column's run."""
    return page(f"Matrix of {len(m.columns)} versions", matrix_body(m, records), BAR_STYLE)
