import asyncio
import json

import pytest

from app.chat.reply import ModelReply
from evals.calibration.calibrate import calibrate
from evals.calibration.sets import MAKERSPACE_SET, load_set, rate
from evals.judge import MAKERSPACE
from evals.judge.trust import (
    MIN_ITEMS,
    MIN_KAPPA,
    JudgeRecord,
    JudgesFileError,
    load_records,
    save_record,
    trust,
)
from evals.load.cases import load_cases
from tests.fakes import ScriptedModel


def record(**kw):
    base = {"model": "m/judge", "prompt_hash": MAKERSPACE.hash(), "set": "makerspace",
            "n": 40, "agreement": 0.9, "kappa": 0.8, "date": "2026-11-30"}
    return JudgeRecord(**{**base, **kw})


def test_a_judge_decides_only_with_enough_agreement_on_enough_items(tmp_path):
    path = tmp_path / "judges.yaml"
    assert not trust("m/judge", MAKERSPACE.hash(), path).trusted
    assert "no calibration record" in trust("m/judge", MAKERSPACE.hash(), path).reason
    save_record(record(kappa=MIN_KAPPA - 0.01), path)
    assert not trust("m/judge", MAKERSPACE.hash(), path).trusted
    save_record(record(set="other", n=MIN_ITEMS - 1, kappa=0.95), path)
    assert not trust("m/judge", MAKERSPACE.hash(), path).trusted
    save_record(record(set="third", kappa=None), path)
    assert not trust("m/judge", MAKERSPACE.hash(), path).trusted
    save_record(record(set="makerspace", kappa=MIN_KAPPA), path)  # replaces the first
    verdict = trust("m/judge", MAKERSPACE.hash(), path)
    assert verdict.trusted and "kappa 0.60 on 40 items of makerspace" in verdict.reason
    assert len(load_records(path)) == 3
    changed = trust("m/judge", "0" * 16, path)
    assert not changed.trusted and "another judge prompt" in changed.reason
    assert not trust("m/other", MAKERSPACE.hash(), path).trusted


def test_a_broken_judges_file_is_a_clear_error(tmp_path):
    path = tmp_path / "judges.yaml"
    path.write_text("- model: m\n")
    with pytest.raises(JudgesFileError, match="judges.yaml"):
        trust("m", "h", path)


def test_the_shipped_calibration_set_covers_every_judged_case_both_ways():
    cases = load_cases()
    items = load_set(cases)
    assert len(items) >= MIN_ITEMS
    judged = {c.id for c in cases if c.judged}
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
    from evals.calibration.calibrate import CalibrationError

    bad = tmp_path / "set.yaml"
    bad.write_text("- id: a\n  case: no-such-case\n  reply: r\n  label: pass\n")
    with pytest.raises(CalibrationError, match="set.yaml:1: 'no-such-case' is not a judged"):
        load_set(load_cases(), bad)
    assert MAKERSPACE_SET.exists()
