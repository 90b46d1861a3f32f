"""The conversations a run holds: a scenario in each visitor style it runs in (calm only when
quick), with its own criteria then the shared ones, and its checks (every turn answered, the
expected actions, the end state, the criteria, required as their enforcement says)."""

from evals.load.conversations import Conversation, conversations
from evals.load.scenarios import load_scenarios
from tests.evals.load.helpers import MINIMAL, item_of, write


def test_shared_criteria_apply_where_they_say_and_the_shipped_set_loads(tmp_path):
    write(tmp_path, MINIMAL + MINIMAL.replace("id: one", "id: other"))
    write(tmp_path, "- statement: Be kind.\n  enforcement: informational\n  applies_to: [one]\n"
                    "- statement: Invent nothing.\n  applies_to: all\n", "criteria.yaml")
    items = {i.id: i for i in conversations(*load_scenarios(tmp_path), full=False)}
    assert [c.statement for c in items["one@calm"].criteria] == [
        "The assistant names the Form 4.", "Be kind.", "Invent nothing."]
    assert [c.statement for c in items["other@calm"].criteria] == [
        "The assistant names the Form 4.", "Invent nothing."]
    shipped, _ = load_scenarios()
    assert len(shipped) >= 12
    quick = conversations(*load_scenarios(), full=False)
    full = conversations(*load_scenarios(), full=True)
    assert {i.style for i in quick} == {"calm"} and len(full) > len(quick)


def test_a_scenario_item_is_scheduled_like_a_case(tmp_path):
    item = item_of(tmp_path, MINIMAL)
    assert isinstance(item, Conversation) and item.id == "one@calm" and item.photos == ()
    assert item.content()["style"] == "calm" and item.executor == "conversation"
    assert [c.kind for c in item.checks] == ["answered", "criterion"]
    assert not item.single_turn and item.judged


REPORT = """\
- id: smoke
  context: {page: tool, toolId: trotec-speedy-400}
  visitor: {who: a student, wants: to report smoke}
  opening: the laser smells of smoke
  expect_actions:
    - tool: report_issue
      arguments: {slug: trotec-speedy-400}
  end_state:
    - table: tickets
      where: {machine: trotec-speedy-400}
    - table: proposals
      exists: false
  criteria:
    - statement: The assistant thanks the visitor.
    - statement: The assistant is cheerful.
      enforcement: informational
"""


def test_the_checks_in_order_each_criterion_required_as_its_enforcement_says(tmp_path):
    write(tmp_path, REPORT)
    write(tmp_path, "- statement: Invent nothing.\n  enforcement: informational\n"
                    "  applies_to: all\n", "criteria.yaml")
    scenarios, shared = load_scenarios(tmp_path)
    [item] = conversations(scenarios, shared, full=False)
    checks = item.checks
    assert [c.kind for c in checks] == ["answered", "expect_action", "end_state", "end_state",
                                        "criterion", "criterion", "criterion"]
    assert [c.required for c in checks] == [True] * 5 + [False, False]
    assert {c.line for c in checks} == {scenarios[0].line} == {1}
    assert [c.args for c in checks[1:4]] == [*scenarios[0].expect_actions,
                                             *scenarios[0].end_state]
    assert [c.args.statement for c in checks[4:]] == [
        "The assistant thanks the visitor.", "The assistant is cheerful.", "Invent nothing."]
    assert item.judged and item.prompt == "the laser smells of smoke"
    assert item.context.page_path == "/tools/trotec-speedy-400"


STYLED = """\
- id: calm-too
  visitor: {who: a student, wants: a printer}
  styles: [hurried, calm]
  end_state: [{table: proposals, exists: false}]
- id: never-calm
  visitor: {who: a student, wants: a printer}
  styles: [insistent, unsure]
  end_state: [{table: proposals, exists: false}]
- id: every
  visitor: {who: a student, wants: a printer}
  end_state: [{table: proposals, exists: false}]
"""


def test_quick_runs_calm_or_a_scenarios_first_style_and_full_runs_every_style(tmp_path):
    scenarios, shared = load_scenarios(write(tmp_path, STYLED))
    assert [i.id for i in conversations(scenarios, shared, full=False)] == [
        "calm-too@calm", "never-calm@insistent", "every@calm"]
    assert [i.id for i in conversations(scenarios, shared, full=True)] == [
        "calm-too@hurried", "calm-too@calm", "never-calm@insistent", "never-calm@unsure",
        "every@calm", "every@hurried", "every@unsure", "every@insistent"]


def test_without_an_opening_the_visitor_writes_first_and_each_style_is_its_own_item(tmp_path):
    scenarios, shared = load_scenarios(write(tmp_path, STYLED))
    calm, hurried = (i for i in conversations(scenarios, shared, full=True)
                     if i.scenario.id == "every" and i.style in ("calm", "hurried"))
    assert calm.prompt == "(the calm visitor writes the first message)"
    assert not calm.judged and [c.kind for c in calm.checks] == ["answered", "end_state"]
    differs = {k for k in calm.content() if calm.content()[k] != hurried.content()[k]}
    assert differs == {"style"}  # the plan tells the two apart by their style alone
    assert (calm.file, calm.group, calm.where) == ("s.yaml", None, calm.scenario.where)


def test_a_scenario_s_assertions_are_checks_and_part_of_its_content(tmp_path):
    from tests.evals.load.helpers import MINIMAL, item_of
    plain = item_of(tmp_path, MINIMAL)
    item = item_of(tmp_path, MINIMAL + "  attack: {channel: earlier_turns, goal: exfiltrate}\n"
                   "  assert:\n    - kind: no_exfiltration\n")
    assert [c.kind for c in item.checks] == ["answered", "no_exfiltration", "attack_delivered",
                                             "criterion"]
    assert item.checks[1].line == 7 and item.attack.channel == "earlier_turns"
    assert "checks" not in plain.content() and "checks" in item.content()


def test_a_scenario_s_photos_are_the_item_s_and_part_of_its_content(tmp_path):
    from tests.evals.load.helpers import MINIMAL, item_of
    plain = item_of(tmp_path, MINIMAL)
    item = item_of(tmp_path, MINIMAL + "  max_turns: 2\n  photos: [IMG_2101.jpg]\n"
                   "  qr_codes: {IMG_2101.jpg: []}\n")
    assert item.photos == ("IMG_2101.jpg",) and plain.photos == ()
    content = item.content()
    assert (content["photos"], content["photo_turn"], content["qr_codes"]) == (
        ["IMG_2101.jpg"], 1, {"IMG_2101.jpg": []})
    assert "photo_cues" in content  # what the visitor is told of them is the plan's too
    # a scenario without photos hashes as it did before they existed
    assert not {"photos", "photo_turn", "qr_codes", "photo_cues"} & set(plain.content())
    later = item_of(tmp_path, MINIMAL + "  max_turns: 2\n  photos: [IMG_2101.jpg]\n"
                    "  photo_turn: 2\n  qr_codes: {IMG_2101.jpg: []}\n")
    assert {k for k in content if content[k] != later.content()[k]} == {"photo_turn"}
