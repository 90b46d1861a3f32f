"""Scenario files: every malformed scenario a file:line error, and a shared criterion naming an
unknown scenario refused."""

import pytest

from app.capabilities import REGISTRY
from evals.load.scenarios import ScenarioFileError, load_scenarios
from tests.evals.load.helpers import MINIMAL, write

READ_PAGE = REGISTRY.tool("read_page").contract()


@pytest.mark.parametrize(("text", "message"), [
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: [grumpy]"),
     "s.yaml:3: unknown style 'grumpy'"),
    (MINIMAL + "  max_turns: 40\n", "s.yaml:5: max_turns: Input should be less than or equal"),
    (MINIMAL.replace("to find a printer", '"to find a printer\\ud800"'),
     "s.yaml:2: lone surrogate U+D800 (written as an escape)"),
    (MINIMAL + "  expect_actions:\n    - tool: launch_rocket\n",
     "expect_actions: 'launch_rocket' is not a tool offered here"),
    (MINIMAL + "  expect_actions:\n    - tool: update_ticket\n",
     "'update_ticket' is not a tool offered here"),  # staff only; this visitor is anonymous
    (MINIMAL + "  expect_actions:\n    - tool: report_issue\n      arguments: {colour: red}\n",
     "report_issue arguments: unknown field 'colour'"),
    (MINIMAL + "  expect_actions:\n    - tool: report_issue\n      arguments:\n"
     "        slug: form-4\n        title_matches: '(tank'\n",
     "s.yaml:9: report_issue arguments: title_matches: not a valid pattern"),
    (MINIMAL + "  expect_actions:\n    - tool: report_issue\n      result: {ticket_id_in: []}\n",
     "s.yaml:7: report_issue result: ticket_id_in needs a list of one or more plain values"),
    (MINIMAL + "  end_state:\n    - table: tickets\n      where: {status_in: [open]}\n",
     "tickets where: status_in: _in is not offered here (only field: value, field_contains)"),
    (MINIMAL + "  tool_responses:\n    update_ticket: {contract: '000000000000', response: {}}\n",
     "s.yaml:6: tool_responses: 'update_ticket' is never offered to anonymous visitor on /"),
    (MINIMAL + "  end_state:\n    - table: secrets\n", "end_state: unknown table 'secrets'"),
    (MINIMAL + "  assert:\n    - kind: shouts_loudly\n",
     "s.yaml:6: unknown assertion kind 'shouts_loudly'"),
    (MINIMAL + "  assert:\n    - kind: called_tool\n      value: update_ticket\n",
     "s.yaml:7: called_tool: 'update_ticket' is never offered to anonymous visitor"),
    (MINIMAL + "  end_state:\n    - table: tickets\n      where: {password: x}\n",
     "tickets where: unknown field 'password'"),
    (MINIMAL + "  tool_responses:\n    teleport: {contract: '000000000000', response: {}}\n",
     "tool_responses: unknown tool 'teleport'"),
    (MINIMAL + f"  tool_responses:\n    read_page: {{contract: {READ_PAGE},"
     " response: {url: x}}\n", "read_page response 1 does not fit the result schema: text:"
     " Field required"),
    (MINIMAL + "  tool_responses:\n    read_page: {contract: 0123456789ab,"
     " response: {url: x, text: y}}\n",
     f"read_page: its contract changed since these responses were written (was 0123456789ab,"
     f" now {READ_PAGE})"),
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: []"),
     "styles: List should have at least 1 item"),
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: [calm, calm]"),
     "style 'calm' is listed twice"),
    (MINIMAL + "  end_state:\n    - table: tickets\n      where: {status: no}\n",
     "tickets where: status needs text or null, not False (quote it)"),
    ("- id: two\n  visitor: {who: a student, wants: x y z}\n",
     "a scenario needs criteria, expect_actions, end_state or assert"),
    ("- id: Bad_Id\n  visitor: {who: a student, wants: x y z}\n  criteria: []\n",
     "s.yaml:1: id: String should match pattern"),

    # photos: each a fixture file, sent once, with one visitor message before the last turn
    (MINIMAL + "  photos: [IMG_2041.jpg, IMG_9999.jpg]\n",
     "s.yaml:5: photo 'IMG_9999.jpg' not found in"),
    (MINIMAL + "  photos:\n    - IMG_2041.jpg\n    - ../cases/photo-identify.yaml\n",
     "s.yaml:7: photo '../cases/photo-identify.yaml' not found in"),
    (MINIMAL + "  photos: [IMG_2041.jpg, IMG_2041.jpg]\n",
     "s.yaml:5: photo 'IMG_2041.jpg' is listed twice"),
    (MINIMAL + "  photos: [IMG_2041.jpg]\n  qr_codes:\n    IMG_2101.jpg: [x]\n",
     "s.yaml:7: qr_codes: 'IMG_2101.jpg' is not one of this scenario's photos (IMG_2041.jpg)"),
    (MINIMAL + "  photos: [IMG_2101.jpg]\n  qr_codes: {IMG_2101.jpg: ['']}\n",
     "s.yaml:6: qr_codes.IMG_2101.jpg.0: String should have at least 1 character"),
    (MINIMAL + "  photo_turn: 2\n", "s.yaml:5: photo_turn: the scenario sends no photos"),
    (MINIMAL + "  max_turns: 3\n  photos: [IMG_2041.jpg]\n  photo_turn: 4\n",
     "s.yaml:7: photo_turn: 4 is after the last visitor message (max_turns: 3)"),
    (MINIMAL + "  photos: [IMG_2041.jpg]\n  photo_turn: 0\n",
     "s.yaml:6: photo_turn: Input should be greater than or equal to 1"),
])
def test_each_malformed_scenario_is_a_file_line_error(tmp_path, text, message):
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(write(tmp_path, text))
    assert any(message in line for line in err.value.errors), err.value.errors


def test_a_shared_criterion_naming_an_unknown_scenario_is_an_error(tmp_path):
    write(tmp_path, MINIMAL)
    write(tmp_path, "- statement: Be kind.\n  applies_to: [one, ghost]\n", "criteria.yaml")
    with pytest.raises(ScenarioFileError, match="criteria.yaml:2: applies_to: unknown"
                                                " scenario 'ghost'"):
        load_scenarios(tmp_path)


def test_a_scenario_may_not_take_a_cases_id(tmp_path):
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c.yaml").write_text(
        '- id: one\n  prompt: "Which printer?"\n  assert:\n    - kind: no_unknown_tools\n')
    (tmp_path / "scenarios").mkdir()
    scenarios = write(tmp_path / "scenarios", MINIMAL)
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(scenarios)  # the cases beside the scenarios folder, by default
    assert err.value.errors == ["s.yaml:1: id 'one' is a case's id (the case at c.yaml:1):"
                                " give one of them another"]
    with pytest.raises(ScenarioFileError):
        load_scenarios(scenarios, case_ids={"one": "other.yaml:4"})
    assert load_scenarios(scenarios, case_ids={})[0][0].id == "one"


def test_photos_load_with_their_turn_and_qr_codes(tmp_path):
    [first], _ = load_scenarios(write(tmp_path, MINIMAL + "  photos: [IMG_2041.jpg]\n"))
    assert first.photos == ("IMG_2041.jpg",) and first.sends_photos_at == 1  # the first message
    text = (MINIMAL + "  max_turns: 3\n  photos: [IMG_2101.jpg, IMG_2041.jpg]\n"
            "  photo_turn: 2\n  qr_codes:\n    IMG_2101.jpg: ['https://x.example/tools/form-4']\n"
            "    IMG_2041.jpg: []\n")
    [second], _ = load_scenarios(write(tmp_path, text))
    assert second.sends_photos_at == 2
    assert second.qr_codes == {"IMG_2101.jpg": ("https://x.example/tools/form-4",),
                               "IMG_2041.jpg": ()}
    [plain], _ = load_scenarios(write(tmp_path, MINIMAL))
    assert plain.photos == () and plain.sends_photos_at is None


def test_photos_are_looked_for_in_the_folder_given(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "mine.jpg").write_bytes(b"jpeg")
    (tmp_path / "scenarios").mkdir()
    scenarios = write(tmp_path / "scenarios", MINIMAL + "  photos: [mine.jpg]\n")
    [one], _ = load_scenarios(scenarios, case_ids={}, photos_dir=tmp_path / "photos")
    assert one.photos == ("mine.jpg",)
    with pytest.raises(ScenarioFileError, match="s.yaml:5: photo 'mine.jpg' not found"):
        load_scenarios(scenarios, case_ids={})  # the fixture photos, by default


def test_one_scenario_checked_as_a_file_of_its_own():
    from evals.load.scenarios import scenario_errors

    scenario = {"id": "one-alone", "visitor": {"who": "a student", "wants": "a printer"},
                "criteria": [{"statement": "It names the Form 4."}]}
    assert scenario_errors(scenario, "draft-1.yaml", {}) == []
    assert scenario_errors(scenario, "draft-1.yaml", {"one-alone": "c.yaml:3"}) == [
        "draft-1.yaml:1: id 'one-alone' is a case's id (the case at c.yaml:3): give one of"
        " them another"]
    assert scenario_errors({**scenario, "styles": ["grumpy"]}, "d.yaml", {}) == [
        "d.yaml:8: unknown style 'grumpy'; known: calm, hurried, unsure, insistent"]
