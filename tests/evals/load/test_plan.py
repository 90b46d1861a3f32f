import shutil
from pathlib import Path

import pytest

from evals.judge import MAKERSPACE, TUTORING
from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.settings import CASES_DIR


def plan(cases, **kw):
    args = {"judge_model": "j/model", "judge_prompt_hash": MAKERSPACE.hash(), "repeat": 1}
    return plan_info(cases, **{**args, **kw})


@pytest.fixture
def copy(tmp_path) -> Path:
    target = tmp_path / "cases"
    shutil.copytree(CASES_DIR, target)
    return target


def test_reordering_or_renaming_files_changes_nothing(copy):
    before = plan(load_cases(copy))
    (copy / "honest-absence.yaml").rename(copy / "zz-honest-absence.yaml")
    text = (copy / "lab-identity.yaml").read_text()
    items = text.split("\n- id: ")
    (copy / "lab-identity.yaml").write_text("\n- id: ".join([items[0], *reversed(items[1:])]))
    assert plan(load_cases(copy)).fingerprint == before.fingerprint


def test_editing_a_case_changes_the_plan_and_names_it(copy):
    before = plan(load_cases(copy))
    path = copy / "honest-absence.yaml"
    path.write_text(path.read_text().replace("Can I book the Glowforge for tomorrow?",
                                             "Can I book the Glowforge on Friday?"))
    after = plan(load_cases(copy))
    assert after.fingerprint != before.fingerprint
    assert after.changes_since(before) == ["case edited: no-glowforge"]


def test_adding_removing_cases_judge_and_repetitions_change_the_plan():
    cases = load_cases()
    base = plan(cases)
    assert "case removed: no-glowforge" in plan(
        [c for c in cases if c.id != "no-glowforge"]).changes_since(base)
    assert plan(cases, judge_model="other").changes_since(base) == [
        "judge changed: {'model': 'j/model', 'prompt_hash': '" + MAKERSPACE.hash() + "'} ->"
        " {'model': 'other', 'prompt_hash': '" + MAKERSPACE.hash() + "'}"]
    assert plan(cases, judge_prompt_hash=TUTORING.hash()).fingerprint != base.fingerprint
    assert plan(cases, repeat=3).changes_since(base) == ["repetitions changed: 1 -> 3"]
    # a plan without judged cases ignores the judge
    unjudged = [c for c in cases if not c.judged]
    assert plan(unjudged).fingerprint == plan(unjudged, judge_model="x").fingerprint


def test_editing_a_fixture_changes_the_plan(monkeypatch, tmp_path):
    import evals.load.plan as plan_module

    cases = [c for c in load_cases() if c.photos][:1]
    before = plan(cases)
    photos = tmp_path / "photos"
    shutil.copytree(plan_module.PHOTOS_DIR, photos)
    (photos / cases[0].photos[0]).write_bytes(b"another photo")
    monkeypatch.setattr(plan_module, "PHOTOS_DIR", photos)
    after = plan(cases)
    assert after.changes_since(before) == [f"fixture changed: photos/{cases[0].photos[0]}"]


def test_the_order_of_a_set_argument_is_not_part_of_the_plan(tmp_path):
    case = ('- id: x\n  prompt: "p"\n  assert:\n    - kind: contains_all\n'
            '      value: [{}, {}]\n')
    (tmp_path / "a.yaml").write_text(case.format("alpha", "beta"))
    first = plan(load_cases(tmp_path))
    (tmp_path / "a.yaml").write_text(case.format("beta", "alpha"))
    assert plan(load_cases(tmp_path)).fingerprint == first.fingerprint
