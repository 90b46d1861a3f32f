import pytest

from evals.record.results import Attempt
from evals.record.run import RunRecord
from evals.report.compare import compare_runs, mcnemar, pair_results, verdict_words
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


def test_mcnemar_against_a_known_table():
    # 1 improved, 9 regressed: two-sided exact p = 2 × (1 + 10) / 2^10
    assert mcnemar(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar(0, 0) is None
    assert mcnemar(3, 3) == pytest.approx(1.0)
    assert "worse, distinguishable from noise" in verdict_words(1, 9, mcnemar(1, 9))
    assert "not distinguishable from noise" in verdict_words(3, 3, 1.0)


def test_only_decided_first_attempts_pair():
    base = [result("a", "PASS"), result("b", "FAIL"), result("c", "PASS"), result("d", "PASS"),
            result("e", "FLAKY"), result("f", "PASS"), result("g", "SKIPPED")]
    cur = [result("a", "FAIL"), result("b", "PASS"), result("c", "PASS"), result("d", "ERROR"),
           result("e", "PASS"), result("f", "UNDECIDED"), result("g", "PASS")]
    got = {p.id: (p.outcome, p.why) for p in pair_results(base, cur)}
    assert got["a"][0] == "regressed" and got["b"][0] == "improved"
    assert got["c"][0] == "unchanged"
    assert got["d"] == ("uncertain", "current errored")
    assert got["e"][0] == "improved"  # its first attempt failed: the retry does not count
    assert got["f"] == ("uncertain", "current undecided judge")
    assert got["g"] == ("uncertain", "baseline skipped")
    c = compare_runs(RunRecord(cases=base), RunRecord(cases=cur))
    assert c.counts == {"improved": 2, "regressed": 1, "unchanged": 1, "uncertain": 3}
    assert c.recovered == {"baseline": 1, "current": 0}


def test_the_case_is_the_unit_of_the_counts_and_missing_results_are_uncertain():
    base = [result("a", "PASS", 1), result("a", "PASS", 2), result("b", "PASS", 1),
            result("gone", "PASS", 1)]
    cur = [result("a", "FAIL", 1), result("a", "FAIL", 2), result("b", "PASS", 1),
           result("new", "PASS", 1)]
    c = compare_runs(RunRecord(cases=base), RunRecord(cases=cur))
    assert c.cases == {"a": "regressed", "b": "unchanged", "new": "uncertain",
                       "gone": "uncertain"}
    assert c.counts == {"improved": 0, "regressed": 1, "unchanged": 1, "uncertain": 2}
    whys = {p.id: p.why for p in c.pairs}
    assert whys["new"] == "no baseline result" and whys["gone"] == "no current result"
    assert c.p_value == 1.0  # one discordant case is no evidence


def test_pass_at_1_leaves_out_a_first_attempt_that_errored():
    errored_then_passed = result("a", "FLAKY", first=[
        Attempt(error="model call failed"),
        Attempt()])
    assert case_stats([errored_then_passed])[0].pass_at_1 is None
