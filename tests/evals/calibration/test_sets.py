import asyncio
import json

import pytest

from app.chat.reply import ModelReply
from evals.calibration.calibrate import CalibrationError, calibrate
from evals.calibration.sets import MAKERSPACE_SET, load_set, rate
from evals.judge.trust import MIN_ITEMS, MIN_KAPPA
from evals.load.cases import load_cases
from tests.fakes import ScriptedModel


def test_the_shipped_calibration_set_covers_every_judged_case_both_ways():
    cases = load_cases()
    items = load_set(cases)
    assert len(items) >= MIN_ITEMS
    judged = {c.id for c in cases if c.judged}
    assert judged
    for case_id in judged:
        labels = {i.reply.label for i in items if i.case.id == case_id}
        assert labels == {"pass", "fail"}, case_id


def test_calibrating_on_the_set_with_a_scripted_judge(tmp_path):
    items = load_set(load_cases())
    # A judge that agrees with the team on every reply but the first.
    replies = [ModelReply(content=json.dumps({
        "verdict": ("fail" if i.reply.label == "pass" else "pass") if n == 0 else i.reply.label,
        "reason": "r"})) for n, i in enumerate(items)]
    judge = ScriptedModel(*replies)
    rated, labels = asyncio.run(rate(items, judge, concurrency=1))
    result = calibrate(rated, labels)
    assert result.rated == len(items) and len(result.disagreements) == 1
    assert result.kappa is not None and result.kappa > MIN_KAPPA
    # the judge saw the case's rubric and the reply as data
    prompt = judge.requests[0]["messages"][1]["content"]
    assert items[0].case.rubric.split()[0] in prompt and "<<<DATA" in prompt


def test_a_bad_calibration_file_names_file_and_line(tmp_path):
    bad = tmp_path / "set.yaml"
    bad.write_text("- id: a\n  case: no-such-case\n  reply: r\n  label: pass\n")
    with pytest.raises(CalibrationError, match="set.yaml:1: 'no-such-case' is not a judged"):
        load_set(load_cases(), bad)
    assert MAKERSPACE_SET.exists()
