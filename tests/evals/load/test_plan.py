import json
import shutil
from pathlib import Path

import pytest

from evals.judge import MAKERSPACE, TUTORING
from evals.load.cases import load_cases
from evals.load.plan import _UNORDERED, plan_info
from evals.record.fingerprint import digest
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


def test_the_large_lab_s_file_is_a_fixture_only_of_plans_that_run_against_it(monkeypatch):
    import evals.load.plan as plan_module

    cases = load_cases()
    demo = [c for c in cases if c.context.catalog == "demo"]
    lab = [c for c in cases if c.context.catalog == "lab"][:1]
    large = [c for c in cases if c.context.catalog == "large"][:1]
    assert demo and lab and large
    before = {name: plan(group) for name, group in
              (("demo", demo), ("lab", demo + lab), ("large", large))}
    real = plan_module._file_hash
    monkeypatch.setattr(plan_module, "_file_hash", lambda path: "edited" if
                        path.name == "large-lab.yaml" else real(path))
    name = "evals/fixtures/catalogs/large-lab.yaml"
    assert name not in before["demo"].fixtures
    assert plan(demo).fingerprint == before["demo"].fingerprint
    for which in ("lab", "large"):
        group = demo + lab if which == "lab" else large
        assert plan(group).changes_since(before[which]) == [f"fixture changed: {name}"]


def test_a_scenario_s_photos_are_fixtures_of_the_plan(monkeypatch, tmp_path):
    import evals.load.plan as plan_module
    from evals.record.fingerprint import VisitorPlan
    from tests.evals.load.helpers import MINIMAL, item_of

    item = item_of(tmp_path, MINIMAL + "  photos: [IMG_2057.jpg]\n")
    visitor = VisitorPlan(model="v/model", prompt_hash="0" * 16)
    before = plan([item], visitor=visitor)
    assert "photos/IMG_2057.jpg" in before.fixtures
    photos = tmp_path / "photos"
    shutil.copytree(plan_module.PHOTOS_DIR, photos)
    (photos / "IMG_2057.jpg").write_bytes(b"another photo")
    monkeypatch.setattr(plan_module, "PHOTOS_DIR", photos)
    after = plan([item], visitor=visitor)
    assert after.changes_since(before) == ["fixture changed: photos/IMG_2057.jpg"]


def test_the_order_of_a_set_argument_is_not_part_of_the_plan(tmp_path):
    case = ('- id: x\n  prompt: "p"\n  assert:\n    - kind: contains_all\n'
            '      value: [{}, {}]\n')
    (tmp_path / "a.yaml").write_text(case.format("alpha", "beta"))
    first = plan(load_cases(tmp_path))
    (tmp_path / "a.yaml").write_text(case.format("beta", "alpha"))
    assert plan(load_cases(tmp_path)).fingerprint == first.fingerprint


PINNED = """\
- id: pinned-tools
  prompt: "Mark the laser ticket resolved and report the Form 4's noise."
  context: { as: staff }
  history:
    - user: "hello"
    - assistant: "Hi."
  assert:
    - kind: called_tool
      value: report_issue
    - kind: not_called_tool
      value: read_page
    - kind: proposed_action
      value: update_ticket
    - kind: contains_all
      value: ["b", "a"]
  rubric: "Proposes, does not claim."
- id: pinned-photo
  prompt: "Which machine is this?"
  photos: [IMG_2101.jpg]
  context: { catalog: lab, as: student }
  assert:
    - kind: identified_tool
      value: form-4
"""


def test_cases_without_selectors_or_frozen_answers_hash_as_they_did_before_them(tmp_path):
    """Selectors and frozen answers came later: a case without them keeps its place in every
    stored plan. The digests were computed by the code before them (d99e41d)."""
    (tmp_path / "pinned.yaml").write_text(PINNED)
    assert plan(load_cases(tmp_path)).cases == {"pinned-photo": "dfc510ef22a08eea",
                                                "pinned-tools": "0b834b17470a358d"}


def test_the_shipped_cases_hash_as_their_content_did_before_selectors_and_frozen_answers():
    """Each shipped case's content as the plan computed it before (d99e41d): a tool check's
    arguments were its value alone, and a case had no frozen answers."""
    def before(case):
        checks = []
        for spec in case.structural():
            args = spec.args.model_dump(mode="json")
            if spec.kind in ("called_tool", "not_called_tool", "proposed_action") and \
                    not (args.get("arguments") or args.get("result")):
                args = {"value": args["value"]}
            if spec.kind in _UNORDERED and isinstance(args.get("value"), list):
                args = {**args, "value": sorted(args["value"])}
            checks.append({"kind": spec.kind, "args": args})
        return {"prompt": case.prompt,
                "context": case.context.model_dump(by_alias=True, mode="json"),
                "history": [h.model_dump(exclude_none=True) for h in case.history],
                "photos": list(case.photos),
                "checks": sorted(checks, key=lambda c: json.dumps(c, sort_keys=True)),
                "rubric": case.rubric, "must_not": case.must_not}

    plain = [c for c in load_cases() if not (c.tool_responses or c.qr_codes) and not any(
        getattr(k.args, "arguments", None) or getattr(k.args, "result", None)
        for k in c.checks)]
    assert len(plain) >= 40
    assert plan(plain).cases == {c.id: digest(before(c)) for c in plain}


def test_an_auto_rule_is_its_own_plan_and_a_fixed_plan_keeps_its_fingerprint():
    from evals.record.repetitions import RepeatRule

    cases = load_cases()
    fixed = plan(cases, repeat=5)
    auto = plan(cases, repeat=5, repeat_rule=RepeatRule(max=5))
    assert auto.fingerprint != fixed.fingerprint and auto.repeat_rule == RepeatRule(max=5)
    assert auto.changes_since(fixed) == [
        "repetition rule changed: 5 fixed -> auto up to 5 (pass rate ≥ 0.5, exact 90%"
        " interval)"]
    # the rule is hashed only when there is one: plans made before it existed still match
    material = {"cases": fixed.cases, "fixtures": fixed.fixtures,
                "judge": {"model": fixed.judge.model, "prompt_hash": fixed.judge.prompt_hash},
                "repeat": 5, "harness": fixed.harness}
    assert fixed.fingerprint == digest(material) and fixed.repeat_rule is None
    with pytest.raises(ValueError, match="the repeat rule's MAX 3 is not repeat 5"):
        plan(cases, repeat=5, repeat_rule=RepeatRule(max=3))


def _conversations():
    from evals.load.conversations import conversations
    from evals.load.scenarios import load_scenarios

    scenarios, shared = load_scenarios()
    return conversations(scenarios, shared, full=False)


def test_the_visitor_is_part_of_a_plan_with_conversations():
    from evals.record.fingerprint import VisitorPlan

    talks = _conversations()
    base = plan(talks, visitor=VisitorPlan(model="v/one", prompt_hash="p1"))
    other_model = plan(talks, visitor=VisitorPlan(model="v/two", prompt_hash="p1"))
    other_prompt = plan(talks, visitor=VisitorPlan(model="v/one", prompt_hash="p2"))
    assert len({base.fingerprint, other_model.fingerprint, other_prompt.fingerprint}) == 3
    assert other_model.changes_since(base) == [
        "simulated visitor's model changed: v/one -> v/two"]
    assert other_prompt.changes_since(base) == [
        "simulated visitor's instructions changed: p1 -> p2"]
    warmer = plan(talks, visitor=VisitorPlan(model="v/one", prompt_hash="p1", settings="s2"))
    assert warmer.fingerprint != base.fingerprint and warmer.changes_since(base) == [
        "simulated visitor's settings changed (endpoint, temperature, token cap or model"
        " file): not recorded -> s2"]
    with pytest.raises(ValueError, match="needs its simulated visitor"):
        plan(talks)


def test_a_plan_of_cases_holds_no_visitor_and_keeps_its_fingerprint():
    from evals.record.fingerprint import VisitorPlan

    cases = load_cases()
    with_visitor = plan(cases, visitor=VisitorPlan(model="v/one", prompt_hash="p1"))
    assert with_visitor.visitor is None and with_visitor.fingerprint == plan(cases).fingerprint


def test_an_evaluator_pack_is_named_in_the_plan():
    cases = load_cases()
    packed = plan(cases, judge_pack="safety/strict")
    assert packed.judge.pack == "safety/strict" and packed.fingerprint != plan(cases).fingerprint
    assert "'pack': 'safety/strict'" in packed.changes_since(plan(cases))[0]


def test_the_visitor_s_instructions_hash_covers_its_styles(monkeypatch):
    from evals.execute import conversation

    before = conversation.visitor_prompt_hash()
    monkeypatch.setitem(conversation.STYLES, "calm", "Write in capitals.")
    assert conversation.visitor_prompt_hash() != before
