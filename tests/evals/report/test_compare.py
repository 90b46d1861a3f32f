"""Two runs compared: the exact McNemar test and its words, and results paired item by item
(only decided first attempts pair; a missing result is uncertain)."""

import pytest

from evals.record.run import RunRecord
from evals.report.compare import compare_runs, mcnemar, pair_results, render, verdict_words
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


def test_a_scenario_in_one_style_is_one_unit_whatever_its_repetitions():
    talks = ["glowforge-under-pressure@calm", "glowforge-under-pressure@insistent",
             "cnc-router-for-aluminium@calm"]
    file = "machines-we-lack.yaml"
    base = [result(t, "PASS", rep, file) for t in talks for rep in (1, 2)]
    cur = [result(t, "FAIL", rep, file) for t in talks for rep in (1, 2)]
    c = compare_runs(RunRecord(cases=base), RunRecord(cases=cur))
    assert [(p.id, p.repetition, p.outcome) for p in c.pairs][:2] == [
        ("glowforge-under-pressure@calm", 1, "regressed"),
        ("glowforge-under-pressure@calm", 2, "regressed")]
    assert c.cases == dict.fromkeys(talks, "regressed")
    # Six regressed repetitions of three items are three discordant units, not six: p = 2/8,
    # where six would be p = 2/64 and pass for a regression distinguishable from noise.
    assert c.counts["regressed"] == 3 and c.p_value == pytest.approx(0.25)
    assert "not distinguishable from noise" in c.verdict
    text = render(c, "a", "b")
    # one line per item, its repetitions' statuses on each side
    assert "  regressed  PASS PASS → FAIL FAIL glowforge-under-pressure@insistent\n" in text
    assert "items (each once, over its 2 repetitions): 0 improved · 3 regressed" in text


def test_repetitions_are_not_matched_by_their_index():
    # The two sides' repetitions are separate samples: one pass in two, before and after, is
    # unchanged in whichever order they came.
    talk, file = "glowforge-under-pressure@calm", "machines-we-lack.yaml"
    base = [result(talk, "PASS", 1, file), result(talk, "FAIL", 2, file)]
    cur = [result(talk, "FAIL", 1, file), result(talk, "PASS", 2, file)]
    c = compare_runs(RunRecord(cases=base), RunRecord(cases=cur))
    assert [p.outcome for p in c.pairs] == ["regressed", "improved"]  # as read, per repetition
    assert c.cases == {talk: "unchanged"} and c.p_value is None


def test_an_item_an_open_judge_could_move_is_uncertain():
    # PASS FAIL before, PASS and an undecided judge now: 1.0 against 0.5 if the open one is
    # left out, but unchanged if the judge would fail it; not an improvement
    def side(*statuses):
        return RunRecord(cases=[result("a", s, rep) for rep, s in enumerate(statuses, 1)])

    assert compare_runs(side("PASS", "FAIL"), side("PASS", "UNDECIDED")).cases == {
        "a": "uncertain"}
    # whatever the judge says, FAIL FAIL before and PASS now is an improvement
    assert compare_runs(side("FAIL", "FAIL"), side("PASS", "UNDECIDED")).cases == {
        "a": "improved"}
    assert compare_runs(side("PASS", "PASS"), side("PASS", "PASS")).cases == {"a": "unchanged"}
