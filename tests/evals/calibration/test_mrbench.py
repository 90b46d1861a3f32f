"""MRBench: a dialogue's history as chat messages, its annotations as pass/fail labels per
dimension, and the judge rating each tutor reply on every dimension (MRBench run as a suite:
tests/evals/cli/test_calibration.py)."""

import json

import pytest

from evals.calibration.calibrate import (
    CalibrationError,
)
from evals.calibration.mrbench import (
    DIMENSIONS,
    dialogue_messages,
    load_items,
    person_label,
    rate,
    report,
)
from tests.evals.calibration.helpers import SAMPLE
from tests.evals.helpers import verdict
from tests.fakes import ScriptedModel


def test_an_mrbench_history_becomes_chat_messages():
    history = "Tutor: Walk me through it.\nStudent: I added 3 and 4\nso 8.\nTutor: Hmm?"
    assert dialogue_messages(history + "\nStudent: 8") == [
        {"role": "assistant", "content": "Walk me through it."},
        {"role": "user", "content": "I added 3 and 4\nso 8."},
        {"role": "assistant", "content": "Hmm?"}, {"role": "user", "content": "8"}]
    assert dialogue_messages("no speakers here") == [{"role": "user",
                                                      "content": "no speakers here"}]
    assert dialogue_messages("Q: 2+2?\nTutor: go on, my student: try") == [
        {"role": "user", "content": "Q: 2+2?"},
        {"role": "assistant", "content": "go on, my student: try"}]


async def test_mrbench_labels_map_and_the_same_judge_rates(tmp_path):
    path = tmp_path / "mr.json"
    path.write_text(json.dumps(SAMPLE))
    items = load_items(path, 30)
    reveal = next(d for d in DIMENSIONS if d.name == "Revealing_of_the_Answer")
    assert person_label(reveal, "No") == "pass"
    assert person_label(reveal, "Yes (but the answer is incorrect)") == "fail"
    guidance = next(d for d in DIMENSIONS if d.name == "Providing_Guidance")
    assert person_label(guidance, "To some extent") is None
    judge = ScriptedModel(verdict("pass"), repeat=True)
    results = report(await rate(items, DIMENSIONS, judge))
    assert results["Revealing_of_the_Answer"].table == {"pass": {"pass": 1, "fail": 0},
                                                        "fail": {"pass": 1, "fail": 0}}
    assert results["Providing_Guidance"].rated == 1  # "To some extent" left out
    assert len(judge.requests) == 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"conversation_id": "x"}]))
    with pytest.raises(CalibrationError, match="dialogue 0 lacks"):
        load_items(bad, 3)


def test_the_shared_mrbench_sample_loads():
    from app.settings import PROJECT_ROOT

    sample = PROJECT_ROOT.parent / "shared" / "data" / "mrbench-v2-sample.json"
    if not sample.exists():
        pytest.skip(f"{sample} is not beside this checkout")
    items = load_items(sample, 1000)
    assert len(items) == 169 and all(i.reply for i in items)
