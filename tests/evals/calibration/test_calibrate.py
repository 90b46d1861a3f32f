import json

import pytest
from sklearn.metrics import cohen_kappa_score

from evals.calibration.calibrate import (
    CALIBRATION_MIN_CASES,
    CalibrationError,
    Rated,
    calibrate,
    judge_of,
    load,
)
from evals.calibration.mrbench import DIMENSIONS, load_items, person_label, rate, report
from evals.cli import main
from tests.evals.calibration.helpers import SAMPLE
from tests.evals.helpers import verdict
from tests.fakes import ScriptedModel

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
