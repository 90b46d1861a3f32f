"""Each side's latency and cost in a comparison, and the gate's limits on their increase."""

import math

import pytest

from evals.record.comparison import Comparison, SideSpend, Spend
from evals.record.results import Attempt, Calls, CaseResult
from evals.report.gate import gate, render
from evals.report.spend import increase, limit_reasons, percentile, render_spend, side_spend
from tests.evals.report.helpers import result


def item(cid, *attempts, rep=1):
    return CaseResult(id=cid, file="f.yaml", prompt="p", status="PASS", repetition=rep,
                      attempts=list(attempts))


def test_nearest_rank_percentiles():
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 0.5) == 10 and percentile(values, 0.95) == 19
    assert percentile([3.0], 0.95) == 3.0 and percentile([], 0.5) is None


def test_a_side_s_latency_and_cost_per_item():
    side = side_spend([
        item("a", Attempt(latency_ms=1000, cost_usd=0.002),
             Attempt(latency_ms=3000, cost_usd=0.002)),  # a retry counts toward its item
        item("b", Attempt(latency_ms=2000, cost_usd=0.001)),
        item("c", Attempt(latency_ms=5, cost_usd=0.0,
                          calls=Calls(replayed=1, replayed_cost_usd=0.001))),
        item("d", Attempt(failure="cost_cap", error="cost cap reached")),  # never asked
    ])
    assert side.cost_per_item_usd == pytest.approx(0.006 / 3)
    assert side.model_copy(update={"cost_per_item_usd": None}) == SideSpend(
        items=3, attempts=4, timed=3, p50_s=2.0, p95_s=3.0, unpriced=0)


def test_one_attempt_without_a_price_makes_the_cost_unknown_never_zero():
    side = side_spend([item("a", Attempt(latency_ms=1000, cost_usd=0.002)),
                       item("b", Attempt(latency_ms=1000, cost_usd=None))])
    assert side.cost_per_item_usd is None and side.unpriced == 1


def test_a_broken_attempt_is_neither_0_s_nor_an_unknown_price():
    # A harness error's attempt has no latency or cost measured: left out of both figures.
    side = side_spend([item("a", Attempt(latency_ms=2000, cost_usd=0.002)),
                       item("b", Attempt(error="checking failed: boom"),
                            Attempt(error="checking failed: boom")),
                       item("c", Attempt(latency_ms=2000, cost_usd=0.002))])
    assert (side.items, side.attempts, side.unpriced) == (2, 2, 0)
    assert side.p50_s == 2.0 and side.cost_per_item_usd == pytest.approx(0.002)


def test_a_side_the_model_never_answered_says_so():
    side = side_spend([item("a", Attempt(failure="cost_cap", error="cost cap reached"))])
    lines = render_spend(Spend(baseline=side, current=side))
    assert lines[1] == "cost per item: unknown (no item the model answered) → unknown (no" \
        " item the model answered)"


def spend(b_cost, c_cost, b_p95=2.0, c_p95=2.0):
    def side(cost, p95):
        return SideSpend(items=10, attempts=10, timed=10 if p95 else 0, p50_s=p95 and 1.0,
                         p95_s=p95, cost_per_item_usd=cost, unpriced=0 if cost else 10)
    return Spend(baseline=side(b_cost, b_p95), current=side(c_cost, c_p95))


def test_an_increase_past_its_limit_is_a_reason_with_the_figures():
    s = spend(0.0021, 0.0044, 2.0, 3.2)
    assert limit_reasons(s, 25, 50) == [
        "cost per item +110% (0.0021 → 0.0044 USD), limit +25%",
        "p95 latency +60% (2 → 3.2 s), limit +50%"]
    assert limit_reasons(s, 200, 100) == [] and limit_reasons(s, None, None) == []
    assert increase(0, 0) == 0 and math.isinf(increase(0, 1))
    assert limit_reasons(spend(0.0, 0.001), 25, None) == [
        "cost per item from 0 (0 → 0.001 USD), limit +25%"]


def test_a_limit_that_cannot_be_checked_says_why():
    assert limit_reasons(spend(None, 0.004), 25, None) == [
        "cost per item cannot be checked against the limit +25%: unknown (baseline 10"
        " attempt(s) without a price)"]
    [reason] = limit_reasons(spend(0.001, 0.001, None, 2.0), None, 50)
    assert reason.startswith("p95 latency cannot be checked against the limit +50%")
    assert "baseline no attempt measured it" in reason


def test_the_spend_lines():
    assert render_spend(spend(0.0021, 0.0044, 2.0, 3.2)) == [
        "latency per attempt: p50 1.00 s → 1.00 s (+0%) · p95 2.00 s → 3.20 s (+60%)",
        "cost per item: 0.0021 USD → 0.0044 USD (+110%)"]
    assert render_spend(spend(None, 0.0044))[1] == \
        "cost per item: unknown (10 attempt(s) without a price) → 0.0044 USD"


def comparison(s):
    return Comparison(baseline_run="a", current_run="b", plan_fingerprint="p", pairs=[],
                      counts={"improved": 0, "regressed": 0, "unchanged": 1, "uncertain": 0},
                      recovered={"baseline": 0, "current": 0}, p_value=None,
                      verdict="no discordant pairs", spend=s)


def test_the_gate_fails_on_a_rise_past_its_limit_with_the_figures():
    results = [result("a", "PASS", 1), result("a", "PASS", 2)]
    g = gate(results, comparison=comparison(spend(0.0021, 0.0044)), max_cost_increase=25)
    assert not g.passed
    assert g.reasons == ["cost per item +110% (0.0021 → 0.0044 USD), limit +25%"]
    out = render(g)
    assert "  cost per item: 0.0021 USD → 0.0044 USD (+110%)" in out
    assert out.splitlines()[-1] == ("GATE FAIL: cost per item +110% (0.0021 → 0.0044 USD),"
                                    " limit +25% (0 of 2 samples replayed from the call cache)")
    assert gate(results, comparison=comparison(spend(0.0021, 0.0044)),
                max_cost_increase=200).passed
    assert not gate(results, comparison=comparison(spend(None, 0.0044)),
                    max_cost_increase=200).passed


def test_a_stored_comparison_without_spend_still_loads_and_gates():
    old = comparison(None).model_dump(exclude={"spend"})
    loaded = Comparison.model_validate(old)
    assert loaded.spend is None
    results = [result("a", "PASS", 1), result("a", "PASS", 2)]
    assert gate(results, comparison=loaded, max_cost_increase=25).passed
    g = gate(results, max_p95_increase=50)  # no point: said, not a failure
    assert g.passed and "no comparison point" in render(g)
