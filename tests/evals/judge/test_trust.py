
import pytest

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
