"""Manual citations: the answer cites a page; every citation resolves to the real PDF."""

from __future__ import annotations

from app.manuals.citations import Citation, check_citations, extract_citations
from evals.checks._registry import Args, Verdict, assertion
from evals.checks.grounding import OptionalValueArg
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import Transcript


@assertion("cites_page", args=OptionalValueArg, needs=frozenset({"tool_calls"}))
def cites_page(turn: Transcript, args: OptionalValueArg, fixtures: Fixtures) -> Verdict:
    cites = extract_citations(turn.answer, turn.search_results(), turn.attached())
    pages = {m.title: m.page_count for m in turn.attached_manuals}

    def within(c: Citation) -> bool:
        count = pages.get(c.title or "")
        return c.source != "attached" or not isinstance(count, int) or \
            (c.page is not None and 1 <= c.page <= count)

    resolved = [c for c in cites if c.url and c.page is not None and c.source is not None
                and within(c)]
    if not resolved:
        return False, "cites no manual page" + (
            f" (unresolved: {[c.raw for c in cites]})" if cites else "")
    if args.value is None:
        return True, f"cites {resolved[0].url}"
    for c in resolved:
        if args.value.isdigit() and c.page == int(args.value):
            return True, f"cites page {c.page}: {c.url}"
        if not args.value.isdigit() and c.url and c.url.endswith(args.value):
            return True, f"cites {c.url}"
    return False, f"cites {[c.url for c in resolved]}, not {args.value}"


@assertion("citations_resolve", needs=frozenset({"tool_calls", "documents"}))
def citations_resolve(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    cites = extract_citations(turn.answer, turn.search_results(), turn.attached())
    titles = fixtures.all_titles | {m.title for m in turn.attached_manuals}
    return check_citations(cites, turn.evidence, titles)
