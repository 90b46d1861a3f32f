"""Measuring catalogue search: the figures of hand-made outcomes, and the shipped set searched
for real in the eval's database holding the large lab (hash embedder), as the command prints."""

import pytest

from evals.calibration.retrieval import CATALOG_SET, load_requests, render_catalog
from evals.calibration.retrieval.catalog_measure import Searched, report


def _searched(expect, answer, found=(), expected=(), rank=None, kind="task", ms=1.0):
    return Searched(id=f"r{len(found)}{answer}", where="x.yaml:1", kind=kind, request="?",
                    expect=expect, expected=list(expected), answer=answer, found=list(found),
                    rank=rank, ms=ms)


def test_figures_of_hand_made_outcomes():
    outcomes = [
        _searched("machines", "machines", ["a", "b"], ["a"], rank=1, ms=2.0),
        _searched("machines", "machines", ["x", "y", "b", "a"], ["a", "b", "c"], rank=3,
                  kind="several", ms=4.0),
        _searched("machines", "none", [], ["a"], kind="model"),  # said none: a miss
        _searched("none", "none", ms=3.0),  # rightly none
        _searched("none", "machines", ["a"]),  # a machine for what the lab lacks
        _searched("overview", "overview"),
    ]
    r = report(outcomes, set_name="x.yaml", embedder="hash", machines=71)
    assert r.n == 3
    assert r.recall_at_1 == pytest.approx(1 / 3) and r.recall_at_3 == pytest.approx(2 / 3)
    assert r.mrr == pytest.approx((1 + 1 / 3) / 3)
    assert r.coverage_at_3 == pytest.approx(1 / 3)  # one of three right within the first three
    assert (r.none_said, r.none_right, r.none_expected) == (2, 1, 2)
    assert (r.none_precision, r.none_recall) == (0.5, 0.5)
    assert (r.overview_given, r.overview_expected) == (1, 1)
    assert [(k.kind, k.n, k.recall_at_3) for k in r.kinds] == [
        ("model", 1, 0.0), ("several", 1, 1.0), ("task", 1, 1.0)]
    text = render_catalog(r, verbose=True)
    assert "recall@1 0.333 · recall@3 0.667" in text
    assert '"none": precision 1/2 = 0.500 · recall 1/2 = 0.500' in text
    assert "search: none" in text and "search: a" in text


async def test_the_shipped_set_searched_in_the_large_lab(env):
    from evals.calibration.retrieval.catalog_measure import search_all

    embedder = env.library.embedder
    await env.use_catalog("large")
    labelled = load_requests(CATALOG_SET)[:12]
    outcomes = await search_all(env.db, embedder, labelled)
    assert [o.id for o in outcomes] == [r.item.id for r in labelled]
    r = report(outcomes, set_name="catalog.yaml", embedder=embedder.name, machines=71)
    assert r.n == sum(o.expect == "machines" for o in outcomes) and r.p50_ms > 0
    assert "catalogue search · catalog.yaml: 12 requests · 71 machines" in render_catalog(r)
