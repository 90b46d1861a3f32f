import shutil
from pathlib import Path

import pytest

from evals.judge import MAKERSPACE, TUTORING
from evals.load.cases import CASES_DIR, load_cases
from evals.record.fingerprint import agent_info, plan_changes, plan_info


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
    assert plan_changes(before, after) == ["case edited: no-glowforge"]


def test_adding_removing_cases_judge_and_repetitions_change_the_plan():
    cases = load_cases()
    base = plan(cases)
    assert "case removed: no-glowforge" in plan_changes(
        base, plan([c for c in cases if c.id != "no-glowforge"]))
    assert plan_changes(base, plan(cases, judge_model="other")) == [
        "judge changed: {'model': 'j/model', 'prompt_hash': '" + MAKERSPACE.hash() + "'} ->"
        " {'model': 'other', 'prompt_hash': '" + MAKERSPACE.hash() + "'}"]
    assert plan(cases, judge_prompt_hash=TUTORING.hash()).fingerprint != base.fingerprint
    assert plan_changes(base, plan(cases, repeat=3)) == ["repetitions changed: 1 -> 3"]
    # a plan without judged cases ignores the judge
    unjudged = [c for c in cases if not c.judged]
    assert plan(unjudged).fingerprint == plan(unjudged, judge_model="x").fingerprint


def test_editing_a_fixture_changes_the_plan(monkeypatch, tmp_path):
    import evals.record.fingerprint as fp

    cases = [c for c in load_cases() if c.photos][:1]
    before = plan(cases)
    photos = tmp_path / "photos"
    shutil.copytree(fp.PHOTOS_DIR, photos)
    (photos / cases[0].photos[0]).write_bytes(b"another photo")
    monkeypatch.setattr(fp, "PHOTOS_DIR", photos)
    after = plan(cases)
    assert plan_changes(before, after) == [f"fixture changed: photos/{cases[0].photos[0]}"]


async def test_a_capability_fragment_changes_the_agent_not_the_plan(env, monkeypatch):
    from app.capabilities import REGISTRY
    from evals.execute.session import all_contexts

    cases = [c for c in load_cases() if c.id in ("no-glowforge", "student-gets-no-staff-tools")]
    git = ("abc", False)
    before = agent_info("m", {}, await all_contexts(env, cases), git)
    again = agent_info("m", {}, await all_contexts(env, cases), git)
    assert before.fingerprint == again.fingerprint
    cap = REGISTRY.capabilities["lab_identity"]
    monkeypatch.setitem(REGISTRY.capabilities, "lab_identity",
                        cap.__class__(**{**cap.__dict__, "prompt": lambda ctx: "changed"}))
    env.composed.clear()  # a later run composes afresh (a run composes each context once)
    after = agent_info("m", {}, await all_contexts(env, cases), git)
    assert after.fingerprint != before.fingerprint
    assert agent_info("m2", {}, before.contexts, git).fingerprint != before.fingerprint
    assert agent_info("m", {}, before.contexts, ("def", False)).fingerprint != \
        before.fingerprint


def test_a_point_runs_its_model_as_it_was_asked_for():
    from evals.cli.runs import point_ref

    local = agent_info("openai/qwen2.5-coder-1.5b-instruct", {}, {}, ("c", False),
                       model_ref="local")
    assert point_ref(local) == "local"  # not the local server's address-bound id
    assert local.fingerprint == agent_info("openai/qwen2.5-coder-1.5b-instruct", {}, {},
                                           ("c", False)).fingerprint
    assert point_ref(agent_info("anthropic/x", {}, {}, ("c", False))) == "anthropic/x"
