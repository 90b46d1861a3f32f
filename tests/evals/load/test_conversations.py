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
