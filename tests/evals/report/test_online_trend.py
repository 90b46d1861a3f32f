"""The online trend: Wilson intervals, a move flagged only beyond the intervals and the
suite's run-to-run noise, agents compared within one audience and page, only news alarming,
and that noise measured on stored runs of one plan by one agent."""

import datetime as dt

import pytest

from evals.load.plan import plan_info
from evals.record.fingerprint import AgentInfo
from evals.record.online import OnlineVerdict
from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import RunRecord
from evals.report.online_trend import (
    flagged_now,
    render_trend,
    suite_noise,
    trend,
    week_of,
    wilson,
)

AT = dt.datetime(2026, 11, 23, 9, tzinfo=dt.UTC)


def test_wilson_against_known_intervals():
    # 0 of 12 and 12 of 12: the textbook 95% Wilson bounds, 0.2425 and 0.7575.
    assert wilson(0, 12) == pytest.approx((0.0, 0.2425), abs=1e-4)
    assert wilson(12, 12) == pytest.approx((0.7575, 1.0), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) is None
    assert week_of(AT) == "2026-W48"


def verdicts(agent, failed, n, start=0, kind="not_claimed_done", context="student /"):
    return [OnlineVerdict(turn_id=start + i, conversation="c", turn_at=AT + dt.timedelta(
        minutes=start + i), agent=agent, context=context, model="m", kind=kind,
        verdict="fail" if i < failed else "pass", harness="h") for i in range(n)]


def test_a_move_is_flagged_beyond_the_intervals_and_the_noise():
    moved = verdicts("a" * 12, 0, 20) + verdicts("b" * 12, 15, 20, start=20)
    (before, after) = trend(moved, {}, "agent")[:2]
    assert not before.flagged and after.flagged
    assert "from 0% (student /: agent aaaaaaaa (m, from 2026-11-23)) to 75%" in after.why
    assert "the intervals alone" in after.why
    # The suite moves that much between runs of one agent: not a change of the agent.
    assert not trend(moved, {"not_claimed_done": 0.8}, "agent")[1].flagged
    assert "beyond the suite's run-to-run noise (10%)" in trend(
        moved, {"not_claimed_done": 0.1}, "agent")[1].why
    # Overlapping intervals: nothing to flag.
    close = verdicts("a" * 12, 2, 20) + verdicts("b" * 12, 5, 20, start=20)
    assert not any(r.flagged for r in trend(close, {}, "agent"))
    text = render_trend(trend(moved, {}, "agent"), {})
    assert "not_claimed_done (suite run-to-run noise: not measured)" in text
    assert "FLAGGED" in text and render_trend([], {}).startswith("no online verdicts yet")


def test_agents_are_compared_within_one_audience_and_page_and_only_news_alarms():
    staff = verdicts("s" * 12, 15, 20, context="staff /staff/tickets")
    student = verdicts("a" * 12, 0, 20, start=20)
    rows = trend(staff + student, {}, "agent")
    assert not any(r.flagged for r in rows)  # another audience's prompt is no deployment
    moved = verdicts("a" * 12, 0, 20) + verdicts("b" * 12, 15, 20, start=20)
    back = verdicts("c" * 12, 0, 20, start=40)
    assert len(flagged_now(trend(moved, {}, "agent"))) == 1
    later = trend(moved + back, {}, "agent")
    assert [r.flagged for r in later] == [False, True, True]  # a fall is flagged too...
    assert flagged_now(later) == []  # ...but alarms nobody, and the rise is old news now


def run(rid, failed, agent="g" * 16):
    checks = [CheckResult(kind="not_claimed_done", passed=i >= failed, reason="")
              for i in range(10)]
    cases = [CaseResult(id=f"c{i}", file="f", prompt="p", status="PASS",
                        attempts=[Attempt(checks=[c])]) for i, c in enumerate(checks)]
    record = RunRecord(run_id=rid, status="complete", cases=cases,
                       plan=plan_info([], judge_model=None, judge_prompt_hash=None, repeat=1))
    record.agent = AgentInfo.model_construct(fingerprint=agent)
    return record


def test_the_suites_noise_is_the_spread_over_runs_of_one_plan_by_one_agent():
    runs = [run("r1", 1), run("r2", 3), run("r3", 9, agent="other" * 4)]
    assert suite_noise(runs) == {"not_claimed_done": pytest.approx(0.2)}
    assert suite_noise(runs[:1]) == {}  # one run alone says nothing of the noise
    tiny = [run("t1", 0, agent="t" * 16), run("t2", 2, agent="t" * 16)]
    for r in tiny:
        r.cases = r.cases[:2]  # two verdicts each: 0% and 100%, a spread of nothing real
    assert suite_noise(runs + tiny) == {"not_claimed_done": pytest.approx(0.2)}
