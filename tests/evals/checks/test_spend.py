"""The latency and cost limits as measured checks: a breach fails with the figure and the
limit; an unknown figure is undecided, never a pass."""

import pytest

from evals.checks import CHECKS, CheckSpec, measure_checks, run_checks
from evals.checks._registry import measured
from evals.checks.spend import MaxCost, MaxLatency, attempt_cost
from evals.record.results import Attempt, Calls


def verdict(kind, attempt, **args):
    spec = CHECKS[kind]
    return spec.measure(attempt, spec.args.model_validate(args))


def test_latency_within_and_over_its_limit():
    assert verdict("max_latency", Attempt(latency_ms=1500), limit_s=2) == \
        (True, "latency 1.50 s, limit 2 s")
    assert verdict("max_latency", Attempt(latency_ms=2500), limit_s=2) == \
        (False, "latency 2.50 s, over the limit of 2 s")


def test_a_replayed_call_leaves_the_latency_undecided():
    passed, reason = verdict("max_latency", Attempt(latency_ms=3, calls=Calls(replayed=1)),
                             limit_s=2)
    assert passed is None and "replayed from the call cache" in reason and "2 s" in reason


def test_cost_within_and_over_its_limit_counting_replayed_calls():
    assert verdict("max_cost", Attempt(cost_usd=0.001), limit_usd=0.002) == \
        (True, "cost 0.001 USD, limit 0.002 USD")
    replayed = Attempt(cost_usd=0.001, calls=Calls(made=1, replayed=1,
                                                   replayed_cost_usd=0.0015))
    assert attempt_cost(replayed) == pytest.approx(0.0025)
    assert verdict("max_cost", replayed, limit_usd=0.002) == \
        (False, "cost 0.0025 USD, over the limit of 0.002 USD")


@pytest.mark.parametrize("attempt", [
    Attempt(cost_usd=None),
    Attempt(cost_usd=0.0, calls=Calls(replayed=2, replayed_cost_usd=None)),
])
def test_an_unknown_cost_is_undecided_never_a_pass(attempt):
    passed, reason = verdict("max_cost", attempt, limit_usd=0.01)
    assert passed is None and reason.startswith("cost unknown") and "0.01 USD" in reason


def test_measured_checks_are_undecided_results_of_the_finished_attempt():
    specs = (CheckSpec("max_latency", MaxLatency(limit_s=1)),
             CheckSpec("max_cost", MaxCost(limit_usd=0.01)))
    attempt = Attempt(latency_ms=500, cost_usd=None)
    results = measure_checks(specs, attempt)
    assert [(r.kind, r.passed, r.decided) for r in results] == [
        ("max_latency 1 s", True, True), ("max_cost 0.01 USD", False, False)]
    done = attempt.model_copy(update={"checks": results})
    assert done.undecided and not done.passed and not done.failed_a_check


async def test_run_checks_leaves_measured_checks_to_the_finished_attempt():
    from evals.checks import About
    from evals.fixtures.catalog import fixtures_for
    from evals.record.transcript import Transcript

    specs = (CheckSpec("max_latency", MaxLatency(limit_s=1)),)
    assert await run_checks(specs, Transcript(answer="hi"), fixtures_for("demo"), None,
                            About(page="/", audience=None, catalog="demo")) == []


def test_a_measured_check_is_a_plain_function_of_attempt_and_args():
    with pytest.raises(TypeError, match="plain function of \\(attempt, args\\)"):
        measured("max_nothing", args=MaxCost, label=str)(lambda attempt: (True, ""))
    assert "max_nothing" not in CHECKS
