"""The Online tab: what the checks found on live traffic (`python -m evals online` stores it):
per check, its failure rate per week as a chart (a bar a week, its 95% interval as a line,
flagged weeks marked), then per deployed agent as a table, each flag with why. Nothing here
checks a turn or runs a model."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evals.api.online import read_trend
from evals.record.online import ONLINE_KINDS, TrendRow
from evals.workspace.layout import e, page

WIDTH, HEIGHT, BAR = 320, 120, 24


def chart(kind: str, rows: list[TrendRow]) -> str:
    """One check's weeks as an inline SVG: a bar per week to its failure rate, its interval
    as a vertical line, a flagged week in red; the figures in the title of each bar."""
    if not rows:
        return ""
    step = WIDTH / max(len(rows), 1)
    parts = []
    for i, r in enumerate(rows):
        x = i * step + (step - min(BAR, step * 0.8)) / 2
        w = min(BAR, step * 0.8)
        rate = r.rate or 0.0
        y = HEIGHT * (1 - rate)
        cls = "flagged" if r.flagged else "week"
        title = (f"{r.label}: {r.failed} failed of {r.decided} decided"
                 + (f" ({rate:.0%})" if r.rate is not None else "")
                 + f", {r.undecided} undecided" + (f" — {r.why}" if r.flagged else ""))
        parts.append(f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}"'
                     f' height="{HEIGHT - y:.1f}"><title>{e(title)}</title></rect>')
        if r.low is not None and r.high is not None:
            cx = x + w / 2
            parts.append(f'<line class="interval" x1="{cx:.1f}" x2="{cx:.1f}"'
                         f' y1="{HEIGHT * (1 - r.high):.1f}" y2="{HEIGHT * (1 - r.low):.1f}"/>')
    return (f'<figure class="trend"><figcaption>{e(kind)}</figcaption>'
            f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{e(kind)}: failure'
            f' rate per week">{"".join(parts)}</svg></figure>')


def table(rows: list[TrendRow]) -> str:
    body = "".join(
        f'<tr class="{"flagged" if r.flagged else ""}"><td>{e(r.kind)}</td><td>{e(r.label)}'
        f"</td><td>{r.failed} of {r.decided}</td><td>"
        + (f"{r.rate:.0%} [{(r.low or 0):.0%}, {(r.high or 0):.0%}]" if r.rate is not None
           else "—")
        + f"</td><td>{r.undecided}</td><td>{e(r.why)}</td></tr>" for r in rows)
    return ('<table class="grid online"><tr><th>check</th><th>agent</th><th>failed</th>'
            f"<th>rate [95%]</th><th>undecided</th><th>flag</th></tr>{body}</table>")


STYLE = """<style>
figure.trend{display:inline-block;margin:6px 12px 6px 0;width:min(320px,100%)}
figure.trend svg{width:100%;height:auto;background:#fafafa;border:1px solid #ddd}
rect.week{fill:#1d3557} rect.flagged{fill:#b3261e} line.interval{stroke:#e0b000;stroke-width:2}
tr.flagged td{background:#fdecea}
</style>"""


class OnlineTab:
    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo

    def routes(self) -> list[Route]:
        return [Route("/online", self.index)]

    async def index(self, request: Request) -> Response:
        shown = await read_trend(self.conninfo)
        if not shown.verdicts:
            return page("online", "Online", "<p>No online verdicts yet: <code>python -m evals"
                        " online</code> checks the app's recorded, consented turns.</p>")
        weeks, agents = shown.by_week, shown.by_agent
        flagged = shown.flagged
        said = (f'<p class="error">{len(flagged)} flagged: '
                + "; ".join(e(f"{r.kind}, {r.label}: {r.why}") for r in flagged) + "</p>"
                if flagged else "<p>Nothing moved beyond the noise.</p>")
        charts = "".join(chart(kind, [r for r in weeks if r.kind == kind])
                         for kind in ONLINE_KINDS)
        return page("online", "Online",
                    STYLE + f'<p class="note">{shown.verdicts} verdicts read'
                    + (f" ({shown.other_harness} of another harness and {shown.withdrawn} of"
                       " withdrawn consent left out)" if shown.other_harness or shown.withdrawn
                       else "") + "</p>"
                    + said + "<h3>Per week</h3>" + charts
                    + "<h3>Per deployed agent</h3>" + table(agents))
