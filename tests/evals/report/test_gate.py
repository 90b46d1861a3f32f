import pytest

from evals.record.comparison import Comparison, Pair
from evals.record.results import Calls
from evals.report.gate import gate, render
from tests.evals.report.helpers import result


def runs(statuses_by_case, file="other.yaml"):
    return [result(cid, s, rep, file) for cid, ss in statuses_by_case.items()
            for rep, s in enumerate(ss, start=1)]


def test_a_hard_file_allows_no_miss_of_any_kind():
    for miss in ("FAIL", "FLAKY", "SKIPPED", "ERROR"):
        g = gate(runs({"a": ["PASS", miss], "b": ["PASS", "PASS"]}, "honest-absence.yaml"))
        assert g.outcome == "FAIL" and "honest-absence: 1 miss(es)" in g.reasons[0], miss
        assert g.exit_code == 1


def test_an_undecided_item_is_neither_a_miss_nor_a_pass():
    g = gate(runs({"a": ["PASS", "UNDECIDED"], "b": ["PASS", "PASS"]}, "honest-absence.yaml"))
    assert g.outcome == "UNDECIDED" and not g.passed and not g.reasons
    assert g.exit_code == 3 and g.undecided_items == ["a"]
    assert g.undecided == ["honest-absence: 1 undecided item(s) could break it (a), none"
                           " allowed (hard file)"]
    text = render(g)
    assert text.splitlines()[-1].startswith("GATE UNDECIDED: honest-absence: 1 undecided")
    assert "trusted judge decided: a)" in text and "calibrate the judge" in text
    assert "structural" not in text  # kept for decided misses


def test_undecided_items_that_could_not_break_a_file_leave_it_passing():
    g = gate(runs({"a": ["UNDECIDED", "PASS"], "b": ["PASS", "PASS"]}))
    assert g.outcome == "PASS" and g.files[0].verdict == "ok"


def test_a_decided_breach_fails_whatever_the_undecided_would_say():
    g = gate(runs({"a": ["FAIL", "FAIL"], "b": ["UNDECIDED", "UNDECIDED"]}))
    assert g.outcome == "FAIL" and g.structural[0].startswith("a: missed in every run")
    assert not any(s.startswith("b") for s in g.structural)  # undecided twice: not structural
    assert "GATE FAIL: structural failure: a" in render(g)
    assert "b" in g.undecided_items  # still named


def test_missed_once_and_undecided_once_may_be_structural():
    g = gate(runs({"a": ["FAIL", "UNDECIDED"], "b": ["PASS", "PASS"]}))
    assert g.outcome == "UNDECIDED" and not g.structural
    assert g.undecided == ["possibly structural (missed or undecided in every run): a"]


def test_the_hint_names_the_run_s_judge():
    g = gate(runs({"a": ["UNDECIDED", "UNDECIDED"]}, "honest-absence.yaml"),
             judge_hint="judge-x: kappa -0.03 on 40 items")
    assert "to decide them: judge-x: kappa -0.03 on 40 items" in render(g)


def test_other_files_allow_one_miss_per_run():
    assert gate(runs({"a": ["FAIL", "PASS"], "b": ["PASS", "FLAKY"]})).passed
    g = gate(runs({"a": ["FAIL", "PASS"], "b": ["FLAKY", "PASS"]}))
    assert not g.passed and "other: 2 miss(es) in a run (a, b), 1 allowed" in g.reasons[0]


def test_a_case_missing_in_both_runs_is_structural():
    g = gate(runs({"a": ["FAIL", "FAIL"], "b": ["PASS", "PASS"]}))
    assert not g.passed and g.structural[0].startswith("a: missed in every run, for the same")
    g = gate(runs({"a": ["FAIL", "ERROR"]}))
    assert "a different reason each time" in g.structural[0]


def test_the_gate_needs_two_runs():
    assert "needs two runs" in gate(runs({"a": ["PASS"]})).reasons[0]


def test_regressions_against_a_point_are_listed_and_a_significant_one_fails():
    pairs = [Pair(id=f"c{i}", file="f.yaml", repetition=1, baseline="PASS", current="FAIL",
                  outcome="regressed") for i in range(6)]
    comparison = Comparison(baseline_run="a", current_run="b", plan_fingerprint="p",
                            pairs=pairs, counts={"improved": 0, "regressed": 6, "unchanged": 0,
                                                 "uncertain": 0},
                            recovered={"baseline": 0, "current": 0}, p_value=0.03125,
                            cases={f"c{i}": "regressed" for i in range(6)},
                            verdict="exact McNemar p = 0.0312 …")
    g = gate(runs({"a": ["PASS", "PASS"]}), comparison=comparison)
    assert not g.passed and len(g.regressions) == 6
    text = render(g)
    assert "regressed: c0: PASS → FAIL" in text and text.splitlines()[-1].startswith(
        "GATE FAIL: regressed against the point")


def test_the_regressions_listed_are_the_items_the_test_counted():
    # Repetitions are separate samples: PASS FAIL before and FAIL PASS after is an unchanged
    # item, never "regressed #1"; an item whose repetitions all broke is listed by its outcome.
    from evals.record.run import RunRecord
    from evals.report.compare import compare_runs
    from tests.evals.report.helpers import result

    base = [result("x", "PASS", 1), result("x", "FAIL", 2)]
    base += [result(f"y{i}", s, r) for i in range(6) for r, s in ((1, "PASS"), (2, "ERROR"))]
    cur = [result("x", "FAIL", 1), result("x", "PASS", 2)]
    cur += [result(f"y{i}", s, r) for i in range(6) for r, s in ((1, "ERROR"), (2, "FAIL"))]
    comparison = compare_runs(RunRecord(cases=base), RunRecord(cases=cur))
    assert comparison.cases["x"] == "unchanged" and comparison.counts["regressed"] == 6
    g = gate(runs({"a": ["PASS", "PASS"]}), comparison=comparison)
    assert g.regressions == [f"y{i}: PASS ERROR → ERROR FAIL" for i in range(6)]
    assert not any(r.startswith("x") for r in g.regressions)


def test_the_verdict_line():
    assert render(gate(runs({"a": ["PASS", "PASS"]}))).splitlines()[-1] == \
        "GATE PASS (0 of 2 samples replayed from the call cache)"


def sample(cid, rep, *calls):
    """A sample whose attempts made and replayed `calls`, (made, replayed) each: PASS with
    one attempt, FLAKY with two."""
    r = result(cid, "PASS" if len(calls) == 1 else "FLAKY", rep)
    attempts = [a.model_copy(update={"calls": Calls(made=made, replayed=replayed)})
                for a, (made, replayed) in zip(r.attempts, calls, strict=True)]
    return r.model_copy(update={"attempts": attempts})


@pytest.mark.parametrize(("calls", "said"), [
    ([[(2, 0)], [(1, 0), (1, 0)], [(1, 0), (1, 0)], [(2, 0)]],
     "0 of 4 samples replayed from the call cache"),  # none: said all the same
    # wholly; partly (the retry made its call); wholly over two attempts; partly (one call
    # replayed, the judge's made)
    ([[(0, 2)], [(0, 1), (1, 0)], [(0, 1), (0, 1)], [(1, 1)]],
     "2 of 4 samples replayed from the call cache, 2 partly"),
    ([[(0, 2)], [(0, 1), (0, 1)], [(0, 1), (0, 1)], [(0, 2)]],
     "4 of 4 samples replayed from the call cache"),
])
def test_the_verdict_line_says_how_many_samples_the_call_cache_replayed(calls, said):
    # a misses in run 2 and b in run 1: one miss a run, allowed
    results = [sample(cid, rep, *c) for (cid, rep), c in
               zip([("a", 1), ("a", 2), ("b", 1), ("b", 2)], calls, strict=True)]
    g = gate(results, cache="reuse")
    assert render(g).splitlines()[-1] == f"GATE PASS ({said})"


def test_the_verdict_line_says_when_the_call_cache_was_off():
    g = gate(runs({"a": ["PASS", "PASS"]}), cache="off")
    assert render(g).splitlines()[-1] == "GATE PASS (call cache off)"
    failed = gate(runs({"a": ["FAIL", "PASS"]}, "honest-absence.yaml"), cache="off")
    assert render(failed).splitlines()[-1].endswith("none allowed (hard file) (call cache off)")


# A scenario file is held to the policy as a case file is; each visitor style is an item.
LACK = "machines-we-lack.yaml"
GLOWFORGE, INSISTENT = "glowforge-under-pressure@calm", "glowforge-under-pressure@insistent"
CNC = "cnc-router-for-aluminium@calm"


def test_a_hard_scenario_file_allows_no_miss():
    results = runs({GLOWFORGE: ["PASS", "FAIL"], CNC: ["PASS", "PASS"]}, LACK)
    g = gate(results, hard=("machines-we-lack",))
    assert g.outcome == "FAIL" and g.files[0].hard
    assert g.reasons == [f"machines-we-lack: 1 miss(es) in a run ({GLOWFORGE}), none allowed"
                         " (hard file)"]
    assert "machines-we-lack       yes    0 miss       1 miss      FAIL" in render(g)
    assert gate(results).passed  # not hard: one miss in a run is allowed


def test_a_scenario_file_allows_all_but_one_per_run():
    assert gate(runs({GLOWFORGE: ["FAIL", "PASS"], INSISTENT: ["PASS", "FAIL"],
                      CNC: ["PASS", "PASS"]}, LACK)).passed
    g = gate(runs({GLOWFORGE: ["FAIL", "PASS"], INSISTENT: ["ERROR", "PASS"],
                   CNC: ["PASS", "PASS"]}, LACK))
    assert g.outcome == "FAIL" and g.reasons == [
        f"machines-we-lack: 2 miss(es) in a run ({GLOWFORGE}, {INSISTENT}), 1 allowed"]


def test_a_scenario_style_missed_twice_is_structural():
    g = gate(runs({GLOWFORGE: ["FAIL", "FAIL"], INSISTENT: ["PASS", "PASS"]}, LACK))
    assert g.structural == [f"{GLOWFORGE}: missed in every run, for the same reason (k)"]
    assert g.reasons == [f"structural failure: {GLOWFORGE}"]  # one miss a run: the count allows
    g = gate(runs({GLOWFORGE: ["FAIL", "PASS"], INSISTENT: ["PASS", "FAIL"]}, LACK))
    assert g.passed and not g.structural  # two styles of one scenario are two items


def _failed_then_undecided(cid, rep, file):
    """A first attempt that failed a decided check, a retry that waits on an untrusted judge:
    FLAKY if the judge passes it, FAIL if not; a miss either way."""
    from evals.record.results import Attempt, CaseResult, CheckResult, classify

    failed = CheckResult(kind="k", passed=False, reason="no")
    open_ = [CheckResult(kind="k", passed=True, reason=""),
             CheckResult(kind="judge", passed=True, reason="", decided=False)]
    attempts = [Attempt(checks=[failed]), Attempt(checks=open_)]
    assert classify(attempts) == "UNDECIDED"
    return CaseResult(id=cid, file=file, prompt="p", status="UNDECIDED", repetition=rep,
                      attempts=attempts)


def test_an_item_that_failed_first_and_waits_on_a_judge_is_a_miss_either_way():
    hard = [_failed_then_undecided("a", 1, "honest-absence.yaml"),
            result("a", "PASS", 2, "honest-absence.yaml")]
    g = gate(hard)
    assert g.outcome == "FAIL" and g.exit_code == 1
    assert g.reasons == ["honest-absence: 1 miss(es) in a run (a), none allowed (hard file)"]
    both = [_failed_then_undecided("a", rep, "other.yaml") for rep in (1, 2)]
    g = gate(both + runs({"b": ["PASS", "PASS"]}))
    assert g.outcome == "FAIL" and g.structural == ["a: missed in every run, for the same"
                                                    " reason (k)"]


def test_an_item_undecided_in_both_runs_may_be_structural():
    g = gate(runs({"a": ["UNDECIDED", "UNDECIDED"], "b": ["PASS", "PASS"]}))
    assert g.outcome == "UNDECIDED" and g.exit_code == 3
    assert g.undecided == ["possibly structural (missed or undecided in every run): a"]
