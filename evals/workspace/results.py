"""The Results tab: a run launched from the Overview as it goes, the run picker, the pass rate
per file across the stored runs, stored comparisons, and one run's evidence with filters,
followed by the assessments stored beside it. Nothing here changes a stored result."""

from __future__ import annotations

from collections import defaultdict

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.redact import redact
from evals.record.assessment import assessments_of
from evals.record.listings import ComparisonSummary, RunSummary
from evals.record.results import CaseResult, Totals
from evals.record.store import RunStore, StoreError
from evals.report.assessments import assessments_html
from evals.report.html import ORDER, comparison_body, run_body, run_title
from evals.workspace.launch import Job, Launcher
from evals.workspace.layout import HEADERS, e, page

RUNS_SHOWN = 30
RATE_RUNS = 8  # runs in the pass-rate chart


class ResultsTab:
    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher

    def routes(self) -> list[Route]:
        return [Route("/results", self.index), Route("/runs/{run_id}", self.legacy),
                Route("/comparisons/{cid}", self.comparison)]

    async def legacy(self, request: Request) -> Response:
        return RedirectResponse(f"/results?run={request.path_params['run_id']}", 303,
                                headers=HEADERS)

    async def index(self, request: Request) -> Response:
        store: RunStore = request.app.state.store
        rows = await store.list_runs(RUNS_SHOWN)
        job = self.launcher.latest
        progress = await _progress(store, job) if job else ""
        chosen = request.query_params.get("run") or (rows[0].id if rows else "")
        evidence, status = "", 200
        if chosen:
            try:
                record = await store.load_run(chosen)
            except StoreError as exc:
                evidence, status = f'<p class="error">{e(exc)}</p>', 404
            else:
                assessments = await assessments_of(store, str(record.run_id))
                evidence = (f"<h2>{e(run_title(record))}</h2>"
                            + _filters(request, record.cases, str(record.run_id))
                            + run_body(record, _filtered(request, record.cases))
                            + assessments_html(record, assessments))
        comparisons = await store.list_comparisons(10)
        body = (progress + _picker(rows, chosen)
                + await _rates(store, rows[:RATE_RUNS]) + _comparisons(comparisons)
                + evidence)
        return page("results", "Results", body, status=status,
                    refresh=request.url.path + (f"?{request.url.query}" if request.url.query
                                                else "") if job and job.running else None)

    async def comparison(self, request: Request) -> Response:
        store: RunStore = request.app.state.store
        try:
            row = await store.load_comparison(request.path_params["cid"])
        except StoreError as exc:
            return page("results", "No such comparison", f'<p class="error">{e(exc)}</p>',
                        status=404)
        label = f"point {row.point}" if row.point else "stored runs"
        return page("results", f"Comparison {row.id} ({label})",
                    comparison_body(row.result, f"run {row.baseline_run}",
                                    f"run {row.current_run}")
                    + f'<p><a href="/results?run={e(row.baseline_run)}">before</a> ·'
                    f' <a href="/results?run={e(row.current_run)}">now</a></p>')


async def _progress(store: RunStore, job: Job) -> str:
    """The launched run as it goes: finished cases by status and cost, per run it stored."""
    runs = await store.launched(job.id)
    state = ("under way" if job.running else
             "finished" if job.returncode in (0, 1) else f"ended (exit {job.returncode})")
    lines = []
    for r in runs:
        counts = r.counts
        total = (r.items or 0) * (r.repeat or 1)
        done = sum(counts.values())
        shown = " ".join(f'<span class="{st}">{st} {int(counts[st])}</span>' for st in ORDER
                         if counts.get(st))
        cost = f"${r.cost:.4f}" if r.cost is not None else "unknown (no price)"
        lines.append(f'<li><a href="/results?run={e(r.id)}">{e(r.id)}</a>'
                     f'{" (" + e(r.version) + ")" if r.version else ""}: {done} of'
                     f' {total} finished · <span class="counts">{shown}</span> cost so far'
                     f" {cost} · {e(r.status)}</li>")
    stop = (f'<form method="post" action="/launch/stop">'
            f'<input type="hidden" name="job" value="{e(job.id)}"><button type="submit"'
            ' class="plain">Stop (keeps what finished)</button></form>' if job.running else "")
    log = redact("\n".join(list(job.output)[-12:]))  # as the artifact: no secret shown
    return (f'<section class="panel" id="progress"><h3>{e(job.title)}: <span'
            f' class="state">{state}</span></h3>'
            f"<ul>{''.join(lines) or '<li>starting…</li>'}</ul>{stop}"
            f'<details><summary>output</summary><pre class="log">{e(log)}</pre></details>'
            "</section>")


def _picker(rows: list[RunSummary], chosen: str) -> str:
    if not rows:
        return ("<p>No stored runs yet: start one on the Overview, or <code>python -m evals"
                " run</code>.</p>")
    options = []
    for r in rows:
        t = r.totals or Totals()
        label = (f"{r.id} · {r.started_at:%Y-%m-%d %H:%M} · {r.status} · {r.model}"
                 f" · {t.passed}/{t.cases} passed" + (f" · point {r.point}" if r.point else "")
                 + (f" · {r.assessments} assessment(s)" if r.assessments else ""))
        options.append(f'<option value="{e(r.id)}"{" selected" if r.id == chosen else ""}'
                       f">{e(label)}</option>")
    return ('<form method="get" action="/results" class="stack picker"><label for="run">Run'
            f'</label><select id="run" name="run">{"".join(options)}</select>'
            '<button type="submit">Show</button></form>')


async def _rates(store: RunStore, rows: list[RunSummary]) -> str:
    """Pass rate per file in each of the newest runs (cases that passed, of the decided
    ones), as a bar per run."""
    if not rows:
        return ""
    per_file: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for c in await store.file_counts([r.id for r in rows]):
        per_file[c.file][c.run_id] = (c.passed, c.decided)
    head = "".join(f"<th>{e(r.id)}</th>" for r in rows)
    body = []
    for file in sorted(per_file):
        cells = []
        for r in rows:
            got = per_file[file].get(r.id)
            if got is None:
                cells.append("<td>—</td>")
                continue
            share = got[0] / got[1]
            cells.append(f'<td><div class="rate"><div class="bar"><span class="fill"'
                         f' style="width:{100 * share:.0f}%"></span></div>{share:.0%}</div>'
                         "</td>")
        body.append(f"<tr><td>{e(file)}</td>{''.join(cells)}</tr>")
    return (f'<h3>Pass rate per file (newest run first)</h3><table class="grid rates">'
            f"<tr><th>file</th>{head}</tr>{''.join(body)}</table>")


def _comparisons(rows: list[ComparisonSummary]) -> str:
    if not rows:
        return ""
    items = "".join(
        f'<li><a href="/comparisons/{e(r.id)}">{e(r.id)}</a> ·'
        f' {r.created_at:%Y-%m-%d %H:%M} · {e(r.point or "stored runs")} · '
        + " · ".join(f"{int(v)} {e(k)}" for k, v in (r.counts or {}).items())
        + f" · {e(r.verdict)}</li>" for r in rows)
    return f"<h3>Comparisons</h3><ul>{items}</ul>"


FILTERS = ("status", "file", "group", "style")


def _style(r: CaseResult) -> str:
    return r.id.rpartition("@")[2] if "@" in r.id else ""


def _value(r: CaseResult, name: str) -> str:
    return {"status": r.status, "file": r.file, "group": r.group or "",
            "style": _style(r)}[name]


def _filtered(request: Request, cases: list[CaseResult]) -> list[CaseResult]:
    wanted = {n: request.query_params.get(n, "") for n in FILTERS}
    return [r for r in cases if all(not v or _value(r, n) == v for n, v in wanted.items())]


def _filters(request: Request, cases: list[CaseResult], run_id: str) -> str:
    selects = []
    for name in FILTERS:
        values = sorted({_value(r, name) for r in cases} - {""})
        if not values:
            continue
        now = request.query_params.get(name, "")
        options = "".join(f'<option{" selected" if v == now else ""}>{e(v)}</option>'
                          for v in values)
        selects.append(f'<div><label for="filter-{name}">{name}</label><select'
                       f' id="filter-{name}" name="{name}"><option value="">all</option>'
                       f"{options}</select></div>")
    return ('<form method="get" action="/results" class="stack filters">'
            f'<input type="hidden" name="run" value="{e(run_id)}"><div class="row">'
            f'{"".join(selects)}</div><button type="submit">Filter</button></form>')
