import pytest

from evals.record.results import Attempt
from evals.report.stats import case_stats, run_stats, stats_lines
from tests.evals.report.helpers import result


def test_pass_at_1_and_pass_all_per_case_against_hand_computed_values():
    rs = [result("a", "PASS", 1), result("a", "FLAKY", 2), result("a", "PASS", 3),
          result("b", "PASS", 1), result("b", "PASS", 2), result("b", "PASS", 3),
          result("c", "ERROR", 1), result("c", "FAIL", 2), result("c", "SKIPPED", 3)]
    by = {c.id: c for c in case_stats(rs)}
    assert by["a"].pass_at_1 == pytest.approx(2 / 3) and not by["a"].pass_all
    assert by["b"].pass_at_1 == 1.0 and by["b"].pass_all
    assert by["c"].pass_at_1 == 0.0 and not by["c"].pass_all  # only the FAIL was decided
    s = run_stats(rs)
    assert s.mean == pytest.approx((2 / 3 + 1 + 0) / 3)
    # t interval over the three cases' pass@1: sd = 0.5092, t(0.975, 2) = 4.3027
    half = 4.302652729911275 * 0.5091750772173156 / 3 ** 0.5
    assert s.low == pytest.approx(max(0, s.mean - half)) and s.high == pytest.approx(1.0)
    assert "mean pass rate 0.56" in "\n".join(stats_lines(rs))


def test_one_repetition_prints_no_repetition_block():
    assert stats_lines([result("a", "PASS")]) == []


def test_one_repetition_of_many_cases_computes_no_statistics(monkeypatch):
    """The interval needs scipy (about 0.5 s and 70 MB to import): a run of one repetition,
    which prints no repetition block, must not pay for it."""
    import evals.report.stats as stats

    def no(*args, **kwargs):
        raise AssertionError("statistics computed for a run of one repetition")

    monkeypatch.setattr(stats, "run_stats", no)
    assert stats_lines([result("a", "PASS"), result("b", "FAIL"), result("c", "PASS")]) == []


def test_pass_at_1_leaves_out_a_first_attempt_that_errored():
    errored_then_passed = result("a", "FLAKY", first=[
        Attempt(error="model call failed"),
        Attempt()])
    assert case_stats([errored_then_passed])[0].pass_at_1 is None


def test_pass_hat_k_counts_a_case_s_own_repetitions():
    # under --repeat auto a case may stop before the run's most: pass^3, not pass^5
    from evals.report.stats import stats_lines

    results = [result("a", "PASS", r) for r in (1, 2, 3)]
    results += [result("b", "PASS", r) for r in (1, 2, 3, 4, 5)]
    lines = stats_lines(results)
    assert any(line.endswith(" a") and " pass^3 yes " in line for line in lines), lines
    assert any(line.endswith(" b") and " pass^5 yes " in line for line in lines), lines
