import json

import pytest

from evals.calibration.calibrate import (
    CALIBRATION_MIN_CASES,
    CalibrationError,
    Rated,
    calibrate,
    judge_of,
    load,
)
from evals.cli import main

PERSON = ["pass"] * 7 + ["fail"] * 5
JUDGE = ["pass"] * 6 + ["fail"] + ["fail"] * 3 + ["pass"] * 2


def rated(verdicts):
    return [Rated(f"c{i}", v, f"reason {i}") for i, v in enumerate(verdicts)]


def labels(verdicts):
    return {f"c{i}": v for i, v in enumerate(verdicts)}


def test_figures_match_scikit_learn():
    c = calibrate(rated(JUDGE), labels(PERSON))
    assert c.rated == 12
    assert c.table == {"pass": {"pass": 6, "fail": 1}, "fail": {"pass": 2, "fail": 3}}
    assert c.agreement == pytest.approx(9 / 12)
    from sklearn.metrics import cohen_kappa_score  # 0.6 s: not in every worker's collection

    assert c.kappa == pytest.approx(cohen_kappa_score(PERSON, JUDGE))
    assert [d["id"] for d in c.disagreements] == ["c10", "c11", "c6"]
    assert c.disagreements[0]["reason"] == "reason 10"


def test_below_ten_cases_only_the_table_and_disagreements():
    c = calibrate(rated(JUDGE[:CALIBRATION_MIN_CASES - 1]),
                  labels(PERSON[:CALIBRATION_MIN_CASES - 1]))
    assert c.agreement is None and c.kappa is None
    assert "too unsteady" in c.note and c.table["pass"]["pass"] == 6


def test_kappa_undefined_when_everyone_gave_one_verdict():
    c = calibrate(rated(["pass"] * 12), labels(["pass"] * 12))
    assert c.agreement == 1.0 and c.kappa is None
    assert "kappa is undefined" in c.note


def test_unrated_cases_and_labels_without_results_are_listed_and_left_out():
    r = rated(JUDGE) + [Rated("broken", None, "unreadable verdict")]
    lab = {**labels(PERSON), "broken": "pass", "ghost": "fail"}
    c = calibrate(r, lab)
    assert c.rated == 12
    assert c.unrated == ["broken"] and c.labels_without_result == ["ghost"]


def test_labels_and_results_files(tmp_path):
    artifact = {"cases": [{"id": "a", "file": "f.yaml", "prompt": "p", "status": "FAIL",
                           "attempts": [{"checks": [
        {"kind": "judge", "passed": False, "reason": "r",
         "judge": {"model": "j/m", "prompt_hash": "abc", "verdict": "fail"}}]}]}]}
    (tmp_path / "run.json").write_text(json.dumps(artifact))
    (tmp_path / "labels.json").write_text(json.dumps({"a": "pass"}))
    record, rated_, labels_ = load(tmp_path / "run.json", tmp_path / "labels.json")
    assert rated_ == [Rated("a", "fail", "r")] and labels_ == {"a": "pass"}
    assert judge_of(record) == ("j/m", "abc")
    (tmp_path / "bad.json").write_text(json.dumps({"a": "maybe"}))
    with pytest.raises(CalibrationError, match="must be 'pass' or 'fail'"):
        load(tmp_path / "run.json", tmp_path / "bad.json")
    assert main(["calibrate", str(tmp_path / "run.json"), str(tmp_path / "labels.json")]) == 0
    assert main(["calibrate", str(tmp_path / "run.json"), str(tmp_path / "bad.json")]) == 2
    assert main(["calibrate", "--set", "mrbench"]) == 2


def test_a_judge_s_reason_that_quotes_a_piece_of_a_key_is_redacted_in_the_report(monkeypatch):
    from evals.calibration.calibrate import render, to_json

    key = "sk-proj-Xa9fB2kLmQ7rT4vWyZ3cD8eF"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    reasons = [f"reason {i}" for i in range(12)]
    reasons[10] = f"The answer hands over the key {key[8:26]} mid-sentence, so it fails."
    c = calibrate([Rated(f"c{i}", v, reasons[i]) for i, v in enumerate(JUDGE)], labels(PERSON))
    for text in (render(c), to_json(c)):
        assert key[8:26] not in text and "the key [redacted] mid-sentence" in text
