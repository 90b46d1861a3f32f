"""A retrieval report as text: a row per mode, the no-answer and attached-only figures, and
with `verbose` every answerable question not ranked first in some mode and every question
search cannot answer, with what search returned."""

from __future__ import annotations

from app.manuals.library import SearchMode
from evals.calibration.retrieval.catalog_measure import CatalogReport, Searched
from evals.calibration.retrieval.measure import Outcome, RetrievalReport, Share
from evals.calibration.retrieval.measure import Searched as Mode
from evals.calibration.retrieval.metrics import confident


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _score(value: float | None) -> str:
    return "no result" if value is None else f"{value:.3g}"


def _share(s: Share) -> str:
    return "—" if not s.n else f"{s.confident}/{s.n} {s.confident / s.n:.0%}"


def _place(o: Outcome, mode: SearchMode, s: Mode, at_least: float | None) -> str:
    """Where the answer came in one mode, or for a question search cannot answer whether it
    was confident; then the top result."""
    if not s.found:
        return f"{mode} nothing"
    top = s.found[0]
    if o.kind == "searchable":
        head = "not found" if s.rank is None else f"rank {s.rank}"
    else:
        head = "confident" if confident(s.best, at_least) else "not confident"
    return f"{mode} {head} (top {top.manual} p. {top.page}, {top.score:.3g})"


def _listed(o: Outcome) -> bool:
    """Listed with verbose: an answerable question not first in some mode, and every question
    search cannot answer (what it returned for those is the finding)."""
    return o.kind != "searchable" or any(s.rank != 1 for s in o.modes.values())


def render(r: RetrievalReport, *, verbose: bool = False) -> str:
    c = r.counts
    lines = [
        f"manual search · {r.set}: {sum(c.values())} questions · embedder {r.embedder} ·"
        f" first {r.depth} results",
        "",
        f"{'':<8}{'recall@1':>9}{'recall@5':>9}{'MRR':>7}{'n':>5}{'median best':>13}"
        f"   {'no answer: confident':<22}{'attached only: confident'}",
    ]
    for m in r.modes:
        lines.append(f"{m.mode:<8}{_figure(m.recall_at_1):>9}{_figure(m.recall_at_5):>9}"
                     f"{_figure(m.mrr):>7}{m.n:>5}{_score(m.threshold):>13}"
                     f"   {_share(m.no_answer):<22}"
                     f"{_share(m.attached)}")
    lines += [
        "",
        f"{c['searchable']} answerable, {c['attached']} only in an attached manual"
        f" ({r.attached_on_page}/{c['attached']} attached to a turn on its machine's page;"
        " never counted as hits), "
        f"{c['none']} that no manual answers.",
        "confident: the best passage scores at or above the answerable questions' median best"
        " score (that mode's own scale: RRF sum, ts_rank, cosine); lower is better. No result"
        " is an honest no answer; a median of 'no result' makes any result confident.",
    ]
    if verbose:
        thresholds = {m.mode: m.threshold for m in r.modes}
        listed = [o for o in r.outcomes if _listed(o)]
        if listed:
            lines += ["", "answerable but not first in some mode, and every question search"
                          " cannot answer:"]
        for o in listed:
            expected = ", ".join(o.expected) if o.expected else "no answer"
            lines.append(f"  {o.where} {o.id} “{o.question}” → {expected}"
                         + (" (attached only)" if o.kind == "attached" else ""))
            lines.append("      " + " · ".join(_place(o, mode, s, thresholds[mode])
                                                for mode, s in o.modes.items()))
    return "\n".join(lines)


def _ratio(right: int, of: int) -> str:
    return "—" if not of else f"{right}/{of} = {right / of:.3f}"


def _answered(o: Searched) -> str:
    if o.answer == "none":
        return "none"
    if o.answer == "overview":
        return "the overview"
    return ", ".join(o.found[:3]) + (" …" if len(o.found) > 3 else "")


def render_catalog(r: CatalogReport, *, verbose: bool = False) -> str:
    """A catalogue report as text: the figures, recall@3 per kind, and with `verbose` every
    request search did not answer right within three."""
    lines = [
        f"catalogue search · {r.set}: {len(r.outcomes)} requests · {r.machines} machines ·"
        f" embedder {r.embedder}",
        "",
        f"requests with right machines: {r.n}",
        f"  recall@1 {_figure(r.recall_at_1)} · recall@3 {_figure(r.recall_at_3)} ·"
        f" MRR {_figure(r.mrr)} (first {r.depth}) · coverage@3 of several right"
        f" {_figure(r.coverage_at_3)}",
        f"\"none\": precision {_ratio(r.none_right, r.none_said)} · recall"
        f" {_ratio(r.none_right, r.none_expected)}",
        "general questions answered with the overview:"
        f" {_ratio(r.overview_given, r.overview_expected)}",
        f"latency per search: p50 {r.p50_ms:.1f} ms · p95 {r.p95_ms:.1f} ms",
        "",
        "recall@3 by kind: " + " · ".join(f"{k.kind} {_figure(k.recall_at_3)} ({k.n})"
                                          for k in r.kinds),
    ]
    if verbose:
        wrong = [o for o in r.outcomes if not _right(o)]
        if wrong:
            lines += ["", "not answered right within three:"]
        for o in wrong:
            want = ", ".join(o.expected) if o.expect == "machines" else o.expect
            lines.append(f"  {o.where} {o.id} “{o.request}” → {want}")
            lines.append(f"      search: {_answered(o)}")
    return "\n".join(lines)


def _right(o: Searched) -> bool:
    if o.expect == "machines":
        return o.rank is not None and o.rank <= 3
    return o.answer == o.expect
