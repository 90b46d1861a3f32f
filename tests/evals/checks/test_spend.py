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


def test_a_replayed_call_with_no_recorded_latency_leaves_the_latency_undecided():
    passed, reason = verdict("max_latency", Attempt(latency_ms=3, calls=Calls(replayed=1)),
                             limit_s=2)
    assert passed is None and "replayed from the call cache" in reason and "2 s" in reason
    assert "not all with the latency they took when made" in reason


def test_replayed_calls_add_their_recorded_latency():
    def replayed(timed, ms):
        return Attempt(latency_ms=300, calls=Calls(made=1, replayed=timed, replayed_timed=timed,
                                                   replayed_latency_ms=ms))

    assert verdict("max_latency", replayed(2, 2900), limit_s=20) == \
        (True, "latency 3.20 s (2 replayed calls at their recorded 2.90 s), limit 20 s")
    assert verdict("max_latency", replayed(2, 2900), limit_s=3) == \
        (False, "latency 3.20 s (2 replayed calls at their recorded 2.90 s), over the limit"
                " of 3 s")
    assert verdict("max_latency", replayed(1, 1800), limit_s=2) == \
        (False, "latency 2.10 s (1 replayed call at its recorded 1.80 s), over the limit of 2 s")


def test_a_replayed_judge_call_is_outside_the_latency():
    # The judge's calls come after the conversation: its replay adds nothing, unknown or not.
    judged = Attempt(latency_ms=1500, calls=Calls(made=1, replayed=1, replayed_timed=0,
                                                  replayed_latency_ms=0))
    assert verdict("max_latency", judged, limit_s=2) == (True, "latency 1.50 s, limit 2 s")


def test_a_record_written_before_replayed_latencies_loads_and_stays_undecided():
    old = Attempt.model_validate({"latency_ms": 40, "calls": {
        "made": 0, "replayed": 2, "replayed_prompt_tokens": 30, "replayed_completion_tokens": 7,
        "replayed_cost_usd": None, "replayed_from": ["run-one"]}})
    assert (old.calls.replayed_timed, old.calls.replayed_latency_ms) == (0, None)
    passed, reason = verdict("max_latency", old, limit_s=2)
    assert passed is None and reason.startswith("latency unknown: 2 model call(s)")


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
