"""Many runs in one table: cells with their pass rates, each column's figures, and each column
paired with the baseline with Holm's correction across the columns."""

import pytest

from evals.record.results import Attempt, Calls, CheckResult
from evals.record.run import RunRecord
from evals.record.visitor import VisitorCheck, VisitorFailure
from evals.report.html import render_run
from evals.report.matrix import build, cell, cell_text, holm, render
from tests.evals.report.helpers import result


def test_holm_against_a_worked_example():
    # Holm (1979): sorted p 0.01, 0.02, 0.04 → 3 × 0.01, 2 × 0.02, max(0.04, 1 × 0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    # 2 × 0.01, then 1 × 0.011 raised to the running maximum (R: p.adjust(…, "holm")).
    assert holm([0.01, 0.011]) == pytest.approx([0.02, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    # A column with no discordant item has no test, and is not counted among them.
    assert holm([None, 0.02]) == [None, pytest.approx(0.02)]
    assert holm([]) == []


def test_a_cell_counts_only_decided_repetitions():
    c = cell([result("a", "FAIL", 2), result("a", "PASS", 1), result("a", "ERROR", 3)])
    assert c.statuses == ["PASS", "FAIL", "ERROR"]
    assert (c.passed, c.decided, c.pass_rate, c.status) == (1, 2, 0.5, "MIXED")
    flaky = cell([result("a", "FLAKY")])
    assert (flaky.pass_rate, flaky.status, cell_text(flaky)) == (1.0, "FLAKY", "FLAKY")
    open_ = cell([result("a", "UNDECIDED", 1), result("a", "SKIPPED", 2)])
    assert open_.pass_rate is None and cell_text(open_) == "—/2"
    assert cell_text(c) == "1/3" and cell_text(None) == "—"


def _priced(status, cid, cost, made=1, replayed=0, ms=1000):
    r = result(cid, status)
    r.attempts = [Attempt(checks=[CheckResult(kind="k", passed=status == "PASS", reason="")],
                          cost_usd=cost, latency_ms=ms,
                          calls=Calls(made=made, replayed=replayed,
                                      replayed_cost_usd=0.0 if replayed else None))]
    return r


def test_columns_and_the_baseline_pairing():
    ids = [f"c{i}" for i in range(10)]
    base = RunRecord(run_id="r-a", cases=[_priced("PASS", i, 0.01) for i in ids])
    # b regresses on 8 of 10 items; c on 1, with every call replayed.
    b = RunRecord(run_id="r-b", cases=[_priced("FAIL" if n < 8 else "PASS", i, 0.02)
                                       for n, i in enumerate(ids)])
    c = RunRecord(run_id="r-c", cases=[_priced("FAIL" if n < 1 else "PASS", i, 0.0, made=0,
                                               replayed=2) for n, i in enumerate(ids)])
    m = build({"a": base, "b": b, "c": c}, {"a": "model-a", "b": "model-b"}, "a")
    assert m.labels == ["a", "b", "c"] and [r.id for r in m.rows] == ids
    assert m.rows[0].cells["b"].status == "FAIL" and m.rows[9].cells["b"].status == "PASS"
    col_a, col_b, col_c = m.columns
    assert col_a.ref == "model-a" and col_c.ref == "c"  # a label without a ref names itself
    assert col_b.totals["FAIL"] == 8 and col_b.totals["PASS"] == 2
    assert col_b.cost_usd == pytest.approx(0.2) and col_b.spend.p50_s == pytest.approx(1.0)
    assert col_a.replayed_share == 0 and col_c.replayed_share == 1.0
    assert col_c.spend.timed == 0  # replayed attempts measured no latency
    vb, vc = m.versus
    assert vb.regressed == ids[:8] and vb.counts["regressed"] == 8
    # exact McNemar: 8 of 8 discordant → p = 2/256; Holm over two tests doubles the smaller.
    assert vb.p_value == pytest.approx(2 / 256) and vb.p_holm == pytest.approx(4 / 256)
    assert "worse than the baseline" in vb.verdict
    assert vc.p_value == pytest.approx(1.0) and "not distinguishable" in vc.verdict
    text = render(m)
    assert "a (baseline): model-a · run r-a" in text
    assert "b vs a: 0 improved · 8 regressed" in text and "regressed: c0, c1" in text
    assert "cost $0.2000" in text and "replayed 100% of 20 calls" in text


def test_the_simulated_visitors_failures_are_counted_apart():
    failed = VisitorCheck(kinds=["leaked"], failures=[VisitorFailure(kind="leaked", turn=1,
                                                                     reason="“simulated”")])
    r = result("talk@calm", "UNDECIDED")
    r.attempts = [Attempt(checks=[CheckResult(kind="k", passed=False, reason="")],
                          visitor=failed)]
    m = build({"a": RunRecord(run_id="r", cases=[r])}, {}, "a")
    assert m.columns[0].visitor_failed == 1
    assert "the simulated visitor failed in 1 (undecided, not counted against the agent)" \
        in render(m)
    page = render_run(RunRecord(run_id="r", cases=[r]))
    assert "undecided: the visitor leaked its instructions at turn 1" in page


def test_an_unpriced_attempt_makes_the_column_cost_unknown_and_the_baseline_must_be_a_column():
    base = RunRecord(run_id="r", cases=[_priced("PASS", "x", None)])
    m = build({"a": base}, {}, "a")
    assert m.columns[0].cost_usd is None and m.versus == []
    assert "cost unknown" in render(m)
    with pytest.raises(ValueError, match="the baseline 'z' is not a column"):
        build({"a": base}, {}, "z")


def test_nothing_decided_on_both_sides_compares_nothing_and_the_spend_is_said_once():
    from evals.record.run import Spent
    from evals.report.html import render_matrix

    spent = Spent(chat=0.35)
    a = RunRecord(run_id="ra", cases=[result("x", "UNDECIDED")], spend=spent)
    b = RunRecord(run_id="rb", cases=[result("x", "UNDECIDED")], spend=spent)
    m = build({"a": a, "b": b}, {}, "a")
    assert m.versus[0].verdict == "no item decided on both sides: nothing to compare"
    page = render_matrix(m, {"a": a, "b": b})
    assert page.count("What the command spent") == 1 and page.count("cost: $0.3500") == 1
