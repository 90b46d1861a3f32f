"""The auto rule replayed on synthetic fixed-K runs: per case the fixed and the auto verdict and
the repetitions each used, the totals, and the runs it refuses."""

import pytest

from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.record.repetitions import RepeatRule
from evals.record.results import CaseResult
from evals.record.run import RunRecord
from evals.report.repeat_rule import ReplayError, render, replay
from tests.evals.helpers import select

SEQUENCES = {
    "always-passes": ["PASS"] * 5,
    "always-fails": ["FAIL"] * 5,
    "mixed": ["PASS", "FAIL", "PASS", "FAIL", "PASS"],
    "untrusted": ["UNDECIDED"] * 5,
    "late-misses": ["PASS", "PASS", "PASS", "FAIL", "FAIL"],
}


def synthetic(sequences=SEQUENCES, rule=None, k=5):
    cases = [CaseResult(id=cid, file="f.yaml", prompt="p", status=s, repetition=n)
             for cid, statuses in sequences.items() for n, s in enumerate(statuses, 1)]
    plan = plan_info(select(load_cases(), "no-glowforge"), judge_model=None,
                     judge_prompt_hash=None, repeat=k, repeat_rule=rule)
    return RunRecord(run_id="synthetic", cases=cases, plan=plan)


def test_the_replay_per_case_and_in_total():
    r = replay(synthetic())
    got = {c.id: (c.fixed, c.auto, c.used, c.reason) for c in r.cases}
    assert got == {
        "always-passes": ("passes", "passes", 3, "settled"),
        "always-fails": ("misses", "misses", 3, "settled"),
        "mixed": ("passes", "passes", 5, "max"),
        "untrusted": ("undecided", "undecided", 1, "undecided"),
        "late-misses": ("passes", "passes", 3, "settled"),
    }
    assert (r.agreed, r.auto_samples, r.fixed_samples) == (5, 15, 25)
    text = render(r)
    assert "stopping bounds of auto up to 5 (pass rate ≥ 0.5, exact 90% interval):" in text
    assert "  3  3               3" in text and "  5  stops at MAX: the fixed verdict" in text
    assert text.endswith("verdicts agree on 5 of 5 cases; repetitions 15 of 25 (60%)")


def test_a_shorter_max_is_measured_against_the_whole_fixed_run():
    r = replay(synthetic({"turns": ["PASS", "FAIL", "FAIL", "FAIL", "FAIL"],
                          "holds": ["PASS"] * 5}), max_repeat=2)
    turns, holds = r.cases
    assert (turns.auto, turns.fixed, turns.used, turns.agree) == ("passes", "misses", 1, False)
    assert (holds.used, holds.agree) == (1, True)
    assert "DIFFERS" in render(r) and "verdicts agree on 1 of 2 cases" in render(r)


def test_an_interrupted_case_is_replayed_on_what_it_recorded():
    r = replay(synthetic({"short": ["PASS", "FAIL"], "full": ["PASS"] * 5}))
    assert [(c.id, c.used, c.auto) for c in r.cases] == [("short", 2, "passes"),
                                                         ("full", 3, "passes")]


@pytest.mark.parametrize("record, kw, error", [
    (synthetic(rule=RepeatRule(max=5)), {}, "run synthetic ran auto up to 5 (pass rate ≥ 0.5,"
     " exact 90% interval): replaying needs a run with a fixed number of repetitions"),
    (RunRecord(run_id="empty"), {}, "run empty has no finished case"),
    (synthetic({"one": ["PASS"]}, k=1), {}, "one repetition a case: there is nothing to stop"),
    (synthetic(), {"max_repeat": 6}, "recorded 5 repetitions a case: the rule's MAX can be at"
     " most 5, not 6"),
    (synthetic(), {"threshold": 1.5}, "threshold 1.5: Input should be less than 1"),
])
def test_runs_it_cannot_replay_are_refused_saying_why(record, kw, error):
    with pytest.raises(ReplayError) as refused:
        replay(record, **kw)
    assert error in str(refused.value)
