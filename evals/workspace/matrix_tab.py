"""The Matrix tab: stored runs of one plan side by side (the runs a `matrix` stored, or any
runs of one plan): rows are items, columns are runs, filtered by file, group and status, each
cell a link to that item's evidence in that run; then each column's figures and each column
against the baseline. Nothing here runs a model or changes a stored result."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evals.api.errors import ApiError
from evals.api.matrix import stored_matrix
from evals.record.listings import RunSummary
from evals.record.matrix import Matrix, Row
from evals.record.results import Totals
from evals.record.store import RunStore, StoreError
from evals.report.html import item_anchor, matrix_figures, matrix_table
from evals.workspace.layout import e, page

RUNS_SHOWN = 30
MOST_COLUMNS = 8
FILTERS = ("file", "group", "status")


class MatrixTab:
    def routes(self) -> list[Route]:
        return [Route("/matrix", self.index)]

    async def index(self, request: Request) -> Response:
        store: RunStore = request.app.state.store
        rows = await store.list_runs(RUNS_SHOWN)
        chosen = request.query_params.getlist("runs")
        baseline = request.query_params.get("baseline") or (chosen[0] if chosen else "")
        picker = _picker(rows, chosen, baseline)
        if len(chosen) < 2:
            return page("matrix", "Matrix", picker + "<p>Choose two runs or more of one plan"
                        " (a <code>python -m evals matrix</code> stores one run per"
                        " version).</p>")
        if len(chosen) > MOST_COLUMNS:
            return _refused(picker, f"at most {MOST_COLUMNS} runs side by side")
        try:
            m = (await stored_matrix(store, chosen, baseline)).result
        except StoreError as exc:
            return _refused(picker, str(exc), 404)
        except ApiError as exc:
            return _refused(picker, str(exc))
        shown = filtered(m, {n: request.query_params.get(n, "") for n in FILTERS})
        table = matrix_table(m, lambda rid, cid: f"/results?run={rid}#{item_anchor(cid)}",
                             shown)
        return page("matrix", "Matrix", picker + _filters(request, m, chosen, baseline)
                    + f'<p class="note">{len(shown)} of {len(m.rows)} items</p>' + table
                    + matrix_figures(m))


def filtered(m: Matrix, wanted: dict[str, str]) -> list[Row]:
    """The rows a filter keeps: of a file, of a group, with a cell of a status."""
    return [r for r in m.rows
            if (not wanted.get("file") or r.file == wanted["file"])
            and (not wanted.get("group") or (r.group or "") == wanted["group"])
            and (not wanted.get("status") or any(c.status == wanted["status"]
                                                 for c in r.cells.values()))]


def _refused(picker: str, message: str, status: int = 400) -> Response:
    return page("matrix", "Matrix", picker + f'<p class="error">{e(message)}</p>',
                status=status)


def _picker(rows: list[RunSummary], chosen: list[str], baseline: str) -> str:
    if not rows:
        return "<p>No stored runs yet.</p>"
    boxes, options = [], []
    for r in rows:
        t = r.totals or Totals()
        label = (f"{r.id} · {r.started_at:%Y-%m-%d %H:%M} · {r.model} · {t.passed}/{t.cases}"
                 " passed" + (f" · point {r.point}" if r.point else ""))
        on = " checked" if r.id in chosen else ""
        boxes.append(f'<label><input type="checkbox" name="runs" value="{e(r.id)}"{on}>'
                     f" {e(label)}</label>")
        options.append(f'<option value="{e(r.id)}"{" selected" if r.id == baseline else ""}>'
                       f"{e(r.id)}</option>")
    return ('<form method="get" action="/matrix" class="stack picker"><fieldset><legend>Runs'
            f'</legend><div class="choices runs">{"".join(boxes)}</div></fieldset>'
            '<label for="baseline">Baseline</label><select id="baseline" name="baseline">'
            f'<option value="">the first chosen</option>{"".join(options)}</select>'
            '<button type="submit">Show</button></form>')


def _filters(request: Request, m: Matrix, chosen: list[str], baseline: str) -> str:
    values = {"file": sorted({r.file for r in m.rows}),
              "group": sorted({r.group for r in m.rows if r.group}),
              "status": sorted({c.status for r in m.rows for c in r.cells.values()})}
    selects = []
    for name in FILTERS:
        if not values[name]:
            continue
        now = request.query_params.get(name, "")
        options = "".join(f'<option{" selected" if v == now else ""}>{e(v)}</option>'
                          for v in values[name])
        selects.append(f'<div><label for="filter-{name}">{name}</label><select'
                       f' id="filter-{name}" name="{name}"><option value="">all</option>'
                       f"{options}</select></div>")
    kept = "".join(f'<input type="hidden" name="runs" value="{e(rid)}">' for rid in chosen)
    return ('<form method="get" action="/matrix" class="stack filters">'
            f'{kept}<input type="hidden" name="baseline" value="{e(baseline)}">'
            f'<div class="row">{"".join(selects)}</div><button type="submit">Filter</button>'
            "</form>")
