"""The auto repetition rule on recorded outcomes: where it stops and what it decides for
unanimous, mixed, errored and undecided cases, its bounds and floor, its exact error rates, its
interval against scipy's, and `--repeat` as a person writes it."""

import math

import pytest
from pydantic import ValidationError

from evals.record.repetitions import (
    RepeatRule,
    exact_interval,
    fixed_decision,
    outcome,
    parse_repeat,
)

RULE = RepeatRule()  # auto up to 5, pass rate ≥ 0.5, exact 90% interval
P, F = "PASS", "FAIL"


def stops(rule, statuses):
    stop = rule.replay(statuses)
    return stop.n, stop.reason, stop.decision


@pytest.mark.parametrize("recorded, expected", [
    ([P] * 5, (3, "settled", "passes")),  # unanimous: 3 passes of 5 can no longer lose
    ([F] * 5, (3, "settled", "misses")),
    (["FLAKY"] * 5, (3, "settled", "misses")),  # a pass on retry is a miss, as the gate says
    ([P, F, P, F, P], (5, "max", "passes")),  # mixed: to MAX, then the fixed verdict
    ([F, P, F, P, F], (5, "max", "misses")),
    ([P, P, F, P, F], (4, "settled", "passes")),
    (["UNDECIDED"] * 5, (1, "undecided", "undecided")),  # a sample cannot earn a judge trust
    ([P, "UNDECIDED", P, P, P], (2, "undecided", "passes")),
    (["SKIPPED"] * 5, (1, "skipped", "undecided")),
    (["ERROR", P, P, P, P], (3, "settled", "passes")),  # an error counts as neither
    (["ERROR"] * 5, (5, "max", "undecided")),
])
def test_where_the_rule_stops_and_what_it_decides(recorded, expected):
    assert stops(RULE, recorded) == expected


def test_no_case_runs_past_max_nor_needs_another_once_stopped():
    for mask in range(2 ** 5):
        recorded = [P if mask >> i & 1 else F for i in range(5)]
        n, _, decision = stops(RULE, recorded)
        assert 1 <= n <= 5 and RULE.stop_after(recorded[:n]) is not None
        assert all(RULE.stop_after(recorded[:m]) is None for m in range(1, n))
        # settling is exact: the verdict is the fixed-5 one on every sequence
        assert decision == fixed_decision(recorded)
    assert RULE.stop_after([]) is None


def test_a_sequence_too_short_to_stop_ends_with_the_verdict_it_has():
    assert stops(RULE, [P, F]) == (2, "max", "passes")


def test_the_interval_stops_a_case_before_settling_when_max_is_high():
    rule = RepeatRule(max=20)
    assert stops(rule, [P] * 20) == (5, "above", "passes")  # settling alone would take 10
    assert stops(rule, [F] * 20) == (5, "below", "misses")
    # the floor: a unanimous case needs ceil(ln(α/2) / ln τ) repetitions to clear τ
    for threshold, confidence in ((0.5, 0.9), (0.5, 0.95), (0.8, 0.9), (0.3, 0.8)):
        rule = RepeatRule(max=100, threshold=threshold, confidence=confidence)
        floor = math.ceil(math.log((1 - confidence) / 2) / math.log(threshold))
        assert rule.replay([P] * 100).n == floor


def test_the_bounds_table():
    assert RULE.bounds() == [(1, None, None), (2, None, None), (3, 3, 3), (4, 3, 3),
                             (5, None, None)]
    assert RepeatRule(max=20).bounds()[4:7] == [(5, 5, 5), (6, 6, 6), (7, 7, 7)]


def test_exact_error_rates():
    for p in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0):
        o = RULE.operating(p)
        assert o.disagree == pytest.approx(0, abs=1e-12)  # the fixed-5 verdict, always
        fixed = sum(math.comb(5, k) * p**k * (1 - p) ** (5 - k) for k in range(3, 6))
        assert o.passes == pytest.approx(fixed)
    assert RULE.operating(1.0).samples == pytest.approx(3)
    assert RULE.operating(0.5).samples == pytest.approx(4.125)
    # auto:3 against a fixed 5: at most half the repetitions, at a stated disagreement
    short = RepeatRule(max=3)
    assert all(short.operating(p, against=5).samples <= 2.5 + 1e-9
               for p in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0))
    assert short.operating(0.9, against=5).disagree == pytest.approx(0.0243, abs=1e-4)
    with pytest.raises(ValueError, match="cannot extend a rule of MAX 5"):
        RULE.operating(0.5, against=3)


def test_the_interval_is_scipys_exact_one():
    from scipy.stats import binomtest

    for n in (1, 2, 5, 12):
        for s in range(n + 1):
            ci = binomtest(s, n).proportion_ci(0.9, method="exact")
            assert exact_interval(s, n, 0.9) == pytest.approx((ci.low, ci.high), abs=1e-9)
    with pytest.raises(ValueError, match="no interval for 3 of 2"):
        exact_interval(3, 2, 0.9)


def test_an_unknown_status_is_refused():
    with pytest.raises(ValueError, match="not a case status: 'MAYBE'"):
        outcome("MAYBE")


@pytest.mark.parametrize("text, expected", [
    ("3", 3), (4, 4), ("auto", RepeatRule(max=5)), (" AUTO:8 ", RepeatRule(max=8)),
])
def test_repeat_as_written(text, expected):
    assert parse_repeat(text) == expected


@pytest.mark.parametrize("text, error", [
    ("0", "repetitions go from 1 to 100, not 0"), ("auto:1", "MAX from 2 to 100, not 1"),
    ("auto5", "not K or auto[:MAX]: 'auto5'"), ("auto:x", "not K or auto[:MAX]: 'auto:x'"),
    ("many", "not K or auto[:MAX]: 'many'"), ("101", "from 1 to 100, not 101"),
])
def test_bad_repeats_are_refused(text, error):
    with pytest.raises(ValueError, match=error.replace("[", r"\[").replace("]", r"\]")):
        parse_repeat(text)


def test_the_rule_checks_its_parameters():
    with pytest.raises(ValidationError):
        RepeatRule(max=1)
    with pytest.raises(ValidationError):
        RepeatRule(threshold=1.0)


@pytest.mark.parametrize("tau", [0.07, 0.14, 0.28, 0.55, 0.56, 0.68])
def test_a_pass_rate_exactly_at_the_threshold_reaches_it(tau):
    # 0.28 * 25 is 7.000000000000001 in floating point: 7 passes of 25 must still reach it.
    from fractions import Fraction

    from evals.record.repetitions import fixed_decision

    rate = Fraction(str(tau))
    n = rate.denominator
    passes = rate.numerator
    assert fixed_decision(["PASS"] * passes + ["FAIL"] * (n - passes), tau) == "passes"
    assert fixed_decision(["PASS"] * (passes - 1) + ["FAIL"] * (n - passes + 1), tau) == \
        "misses"
