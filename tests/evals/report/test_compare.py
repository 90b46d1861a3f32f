"""Two runs compared: the exact McNemar test and its words, and results paired case by case
(only decided first attempts pair; a missing result is uncertain)."""

import pytest

from evals.record.run import RunRecord
from evals.report.compare import compare_runs, mcnemar, pair_results, verdict_words
from tests.evals.report.helpers import result


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
