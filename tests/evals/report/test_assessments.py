"""A run's assessments read beside its results: a re-judging's checks paired by place, a
rescore's by kind (a check on one side only against a dash), the statuses it moves, and the
HTML, escaped, that the report and the workspace show."""

import pytest

from evals.record.assessment import (
    AssessedCase,
    AssessedCheck,
    Assessment,
    AssessmentJudge,
    LeftOut,
)
from evals.record.results import CheckResult, JudgeVerdict
from evals.report.assessments import assessments_html, beside, summary, who
from evals.report.html import render_run
from tests.evals.record.helpers import judged_run


def _verdict(v, reason="the new judge's reason"):
    return CheckResult(kind="judge", passed=v == "pass", reason=reason,
                       judge=JudgeVerdict(model="other-judge", prompt_hash="h2", verdict=v))


def _rejudging(run_id, verdicts, *, statuses=None, decides=True):
    return Assessment(
        id="as0001", run_id=run_id, kind="rejudge", created="2026-12-01T10:00:00+00:00",
        harness="hh", judge=AssessmentJudge(model="other-judge", prompt_hash="h2",
                                            decides=decides, trust="kappa 0.80 on 40 items"),
        left_out=[LeftOut(id="gone", repetition=1, reason="no longer in the case files")],
        cases=[AssessedCase(id=f"case-{i}", repetition=1,
                            status=(statuses or {}).get(i, "UNDECIDED"),
                            checks=[AssessedCheck(attempt=1, check=2, result=_verdict(v))])
               for i, v in enumerate(verdicts)])


def test_a_rejudging_is_read_beside_the_run_check_by_check_at_its_places():
    record = judged_run("run-a", ["pass", "fail", "fail"])
    b = beside(record, _rejudging("run-a", ["pass", "pass", "fail"], statuses={1: "PASS"}))
    assert [(c.id, c.attempt, c.kind, c.before, c.after) for c in b.checks] == [
        ("case-0", 1, "judge", "pass", "pass"),
        ("case-1", 1, "judge", "fail", "pass"),
        ("case-2", 1, "judge", "fail", "fail")]
    assert (b.agree, b.disagree) == (2, 1)
    assert b.moved == [("case-1", 1, "UNDECIDED", "PASS")]
    assert summary(b) == ("3 stored result(s); 3 check(s) beside the run's: 2 pass, 1 fail;"
                          " 2 agree, 1 differ; 1 status(es) changed")
    assert who(b.assessment) == ("judge other-judge (prompt h2): its verdicts decide")


def test_a_judge_that_was_not_asked_agrees_and_differs_with_nothing():
    record = judged_run("run-b", ["fail", "fail"], asked=False)
    b = beside(record, _rejudging("run-b", ["pass", "fail"], decides=False))
    assert [(c.before, c.after) for c in b.checks] == [("not asked", "pass"),
                                                       ("not asked", "fail")]
    assert (b.agree, b.disagree, b.moved) == (0, 0, [])
    assert who(b.assessment).endswith(": not called")  # as rejudge says it


def test_a_rescore_pairs_checks_by_kind_and_shows_one_sided_ones_against_a_dash():
    record = judged_run("run-c", ["pass"])  # checks: no_unknown_tools, then judge
    today = [CheckResult(kind="judge", passed=True, reason="as recorded",
                         judge=JudgeVerdict(model="judge-m", prompt_hash="h1", verdict="pass")),
             CheckResult(kind="cites_a_page", passed=False, reason="no page cited")]
    rescore = Assessment(id="as0002", run_id="run-c", kind="rescore",
                         created="2026-12-02T09:00:00+00:00", harness="abcdef0123456789",
                         cases=[AssessedCase(id="case-0", repetition=1, status="FAIL",
                                             checks=[AssessedCheck(attempt=1, check=n, result=c)
                                                     for n, c in enumerate(today, start=1)])])
    b = beside(record, rescore)
    assert [(c.kind, c.before, c.after) for c in b.checks] == [
        ("judge", "pass", "pass"), ("cites_a_page", "—", "fail"),
        ("no_unknown_tools", "pass", "—")]
    assert (b.agree, b.disagree) == (1, 0)
    assert b.moved == [("case-0", 1, "UNDECIDED", "FAIL")]
    assert who(rescore) == "today's checks (harness abcdef012345)"


def test_an_assessment_of_another_run_is_refused_and_a_case_the_record_lacks_is_named():
    record = judged_run("run-d", ["pass"])
    with pytest.raises(ValueError, match="assessment as0001 is of run run-x, not of run run-d"):
        beside(record, _rejudging("run-x", ["pass"]))
    b = beside(record, _rejudging("run-d", ["pass", "fail"]))
    assert b.not_in_run == ["case-1 #1"]
    assert "case-1 #1: not in this run's record" in assessments_html(record,
                                                                          [b.assessment])


def test_the_page_shows_the_assessments_after_the_run_s_own_results_escaped():
    record = judged_run("run-e", ["fail", "fail"])
    hostile = _rejudging("run-e", ["pass", "fail"], statuses={0: "PASS"})
    hostile.cases[0].checks[0].result.reason = "<script>alert(1)</script>"
    page = render_run(record, [hostile])
    assert page.index("UNDECIDED (2)") < page.index("Assessments beside this run (1)")
    assert '<details class="item" id="assessment-as0001" open>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert ('<span class="id">case-0</span> #1: <span class="UNDECIDED">UNDECIDED</span> →'
            ' <span class="PASS">PASS</span>') in page
    assert "gone #1: no longer in the case files" in page
    # a run with no assessment: the page as it was
    assert "Assessments beside" not in render_run(record)
    assert assessments_html(record, []) == ""
