
import pytest

from evals.judge import MAKERSPACE
from evals.judge.trust import (
    MIN_ITEMS,
    MIN_KAPPA,
    PACK_SET,
    JudgeRecord,
    JudgesFileError,
    has_record,
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


RECORD = "- model: m\n  prompt_hash: h\n  set: makerspace\n  n: 40\n  agreement: 0.9\n"


@pytest.mark.parametrize(("text", "says"), [
    (RECORD + "  kappa: .inf\n  date: '2026-12-01'\n", "record 0.kappa: Input should be a"
     " finite number"),
    (RECORD + "  kappa: 1.5\n  date: '2026-12-01'\n", "record 0.kappa: Input should be less"),
    (RECORD.replace("n: 40", "n: -5") + "  kappa: 0.8\n  date: '2026-12-01'\n",
     "record 0.n: Input should be greater than or equal to 0"),
    (RECORD + "  kappa: 0.8\n  date: 2026-13-45\n", "cannot be read (ValueError: month"),
    (RECORD + "  kappa: " + "9" * 5000 + "\n  date: '2026-12-01'\n", "cannot be read"),
    ("\xff\xfe", "cannot be read (UnicodeDecodeError"),
])
def test_an_impossible_or_unreadable_record_is_a_clear_error(tmp_path, text, says):
    path = tmp_path / "judges.yaml"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    with pytest.raises(JudgesFileError, match="judges.yaml") as caught:
        trust("m", "h", path)
    assert says in str(caught.value)


def test_an_unquoted_date_is_read_as_the_text_it_was(tmp_path):
    path = tmp_path / "judges.yaml"
    path.write_text(RECORD + "  kappa: 0.8\n  date: 2026-12-01\n")
    assert load_records(path)[0].date == "2026-12-01"
    assert trust("m", "h", path).trusted


def test_a_judges_file_written_before_packs_still_loads(tmp_path):
    path = tmp_path / "judges.yaml"
    path.write_text("- model: m/judge\n  prompt_hash: abc\n  set: makerspace\n  n: 63\n"
                    "  agreement: 0.5\n  kappa: -0.03\n  date: '2026-11-30'\n")
    (old,) = load_records(path)
    assert old.pack is None and old.n == 63
    assert has_record("m/judge", "abc", path) and not has_record("m/judge", "other", path)
    assert not trust("m/judge", "abc", path).trusted  # a bad record is still a record
    save_record(record(prompt_hash="packed", pack="safety/x", set=PACK_SET), path)
    text = path.read_text()
    assert text.count("pack:") == 1 and "pack: safety/x" in text  # the base's has no pack key
    assert [r.pack for r in load_records(path)] == [None, "safety/x"]


def packed(**kw):
    """A pack's record on labels people gave with its rubric in view."""
    return record(**{"prompt_hash": "packed", "pack": "safety/x", "set": PACK_SET, **kw})


def test_a_pack_earns_trust_by_its_own_record_under_its_own_prompt(tmp_path):
    path = tmp_path / "judges.yaml"
    save_record(record(), path)  # the base prompt's calibration is not the pack's
    missing = trust("m/judge", "packed", path, pack="safety/x")
    assert not missing.trusted
    assert "no calibration record under pack safety/x's prompt" in missing.reason
    assert "calibrate --labels --pack safety/x --save" in missing.reason
    assert "--set makerspace" not in missing.reason
    save_record(packed(kappa=MIN_KAPPA - 0.1), path)
    assert not trust("m/judge", "packed", path, pack="safety/x").trusted  # the same rule
    save_record(packed(kappa=0.7), path)  # replaces
    earned = trust("m/judge", "packed", path, pack="safety/x")
    assert earned.trusted and f"kappa 0.70 on 40 items of {PACK_SET}" in earned.reason
    assert len(load_records(path)) == 2
    save_record(packed(n=MIN_ITEMS - 1), path)
    assert not trust("m/judge", "packed", path, pack="safety/x").trusted


def test_a_pack_calibrated_on_case_rubric_labels_earns_no_trust(tmp_path):
    # A record a pack got on the makerspace set (labels given under each case's own rubric),
    # as judges.yaml holds from before: kept, read, and never counted for the pack.
    path = tmp_path / "judges.yaml"
    path.write_text("- model: m/judge\n  prompt_hash: packed\n  set: makerspace\n  n: 76\n"
                    "  agreement: 0.95\n  kappa: 0.9\n  date: '2026-12-02'\n"
                    "  pack: safety/x\n")
    found = trust("m/judge", "packed", path, pack="safety/x")
    assert not found.trusted
    assert ("m/judge's calibration under pack safety/x's prompt (on makerspace) was measured"
            " against labels people gave without the pack's rubric in view") in found.reason
    assert "calibrate --labels --pack safety/x --save" in found.reason
    # nor is a new one of that kind written: it would say nothing of the pack
    with pytest.raises(ValueError, match="a record of pack safety/x on 'makerspace' is not"
                                         " kept"):
        save_record(packed(set="makerspace", kappa=0.9), path)
    with pytest.raises(ValueError, match="not kept"):
        save_record(packed(set="labels", kappa=0.9), path)  # labels given without its rubric
    assert len(load_records(path)) == 1
    save_record(packed(kappa=0.7), path)  # on labels given under its rubric: it counts
    assert trust("m/judge", "packed", path, pack="safety/x").trusted


def test_the_judges_file_is_found_when_asked_for(tmp_path, monkeypatch):
    import evals.judge.trust as module

    monkeypatch.setattr(module, "JUDGES_FILE", tmp_path / "judges.yaml")
    save_record(record())
    assert (tmp_path / "judges.yaml").exists() and trust("m/judge", MAKERSPACE.hash()).trusted
