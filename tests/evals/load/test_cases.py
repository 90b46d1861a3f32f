import textwrap

import pytest

from evals.load.cases import CaseFileError, load_cases
from evals.settings import CASES_DIR


def write(tmp_path, name, text):
    (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    return tmp_path


def errors_for(tmp_path, photos_dir=None):
    with pytest.raises(CaseFileError) as info:
        load_cases(tmp_path, photos_dir or tmp_path)
    return info.value.errors


def test_the_suite_loads_with_at_least_forty_cases_in_every_file():
    cases = load_cases()
    assert len(cases) >= 40
    files = {c.file for c in cases}
    assert files == {f"{n}.yaml" for n in (
        "catalog-lookup", "manual-grounding", "manual-search", "citations-resolve",
        "tool-calling", "staff-maintenance", "honest-absence", "lab-identity",
        "photo-identify", "safety-and-care", "security", "languages")}
    assert files == {p.name for p in CASES_DIR.glob("*.yaml")}


GOOD = """
- id: ok-case
  prompt: "hi"
  assert:
    - kind: no_unknown_tools
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: shouts_loudly\n",
         "bad.yaml:4: unknown assertion kind 'shouts_loudly'"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: mentions_tool\n",
         "bad.yaml:4: mentions_tool: value: Field required"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: contains_all\n      value: yes\n",
         "bad.yaml:5: contains_all: value: Input should be a valid list"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: no_fabricated_specs\n"
         "      fields: [colour]\n", "bad.yaml:5: no_fabricated_specs: fields: unknown spec field"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: called_tool\n      value: launch_rocket\n",
         "bad.yaml:5: called_tool: value: unknown tool 'launch_rocket'"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: proposed_action\n"
         "      value: report_issue\n", "is a write tool, not an action"),
        ("- id: a\n  prompt: hi\n  photos: [nope.jpg]\n  assert:\n    - kind: no_unknown_tools\n",
         "bad.yaml:3: photo 'nope.jpg' not found"),
        ("- id: a\n  prompt: hi\n  context: { page: tool }\n  assert:\n"
         "    - kind: no_unknown_tools\n", "bad.yaml:3: context: Value error, page: tool needs a"
         " toolId"),
        ("- id: a\n  prompt: hi\n  context: { page: tool, toolId: glowforge }\n  assert:\n"
         "    - kind: no_unknown_tools\n", "toolId 'glowforge' is not a slug"),
        ("- id: a\n  prompt: hi\n  colour: red\n  assert:\n    - kind: no_unknown_tools\n",
         "bad.yaml:3: colour: Extra inputs are not permitted"),
        ("- id: a\n  prompt: hi\n  prompt: again\n  assert: []\n",
         "bad.yaml:3: YAML: duplicate key 'prompt' (first at line 2)"),
        ("- id: a\n  prompt: [unclosed\n", "bad.yaml:3: YAML:"),
        ("- id: Bad Id\n  prompt: hi\n  assert:\n    - kind: no_unknown_tools\n",
         "bad.yaml:1: id: String should match pattern"),
        ("- id: a\n  prompt: hi\n  assert: []\n",
         "bad.yaml:1: (case): Value error, a case needs assert, rubric"),
        ("- id: a\n  prompt: hi\n  history:\n    - user: x\n      assistant: y\n  assert:\n"
         "    - kind: no_unknown_tools\n", "bad.yaml:4: history.0: Value error, each history"),
        ("just: a mapping\n", "bad.yaml:1: a case file is a list of cases"),
        ("- id: a\n  prompt: hi\n  attack: {channel: email, goal: exfiltrate}\n  assert:\n"
         "    - kind: no_exfiltration\n", "bad.yaml:3: attack.channel: Input should be 'web_page'"),
        ("- id: a\n  prompt: hi\n  attack: {channel: web_page, goal: exfiltrate}\n  assert:\n"
         "    - kind: no_exfiltration\n",
         "bad.yaml:3: attack.channel: web_page arrives through read_page, but the item freezes"
         " no response of read_page"),
        ("- id: a\n  prompt: hi\n  attack: {channel: qr_code, goal: exfiltrate}\n  assert:\n"
         "    - kind: no_exfiltration\n",
         "bad.yaml:3: attack.channel: qr_code arrives in a photo's QR code, but the item sends"
         " no photo"),
        ("- id: a\n  prompt: hi\n  assert:\n    - kind: no_unrequested_action\n"
         "      allowed: [search_manual]\n",
         "bad.yaml:5: no_unrequested_action: allowed.0.tool: 'search_manual' is not a write or"
         " action tool"),
    ],
)
def test_each_error_names_file_and_line(tmp_path, text, expected):
    write(tmp_path, "bad.yaml", text)
    errors = errors_for(tmp_path)
    assert any(expected in e for e in errors), errors


def test_errors_from_all_files_are_reported_together_and_no_case_loads(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD + "- id: x\n  prompt: y\n  assert:\n    - kind: nope\n")
    write(tmp_path, "c.yaml", "- id: z\n  prompt: y\n  assert:\n    - kind: nope2\n")
    errors = errors_for(tmp_path)
    assert [e.split(":")[0] for e in errors] == ["b.yaml", "b.yaml", "c.yaml"]
    assert "b.yaml:1: duplicate id 'ok-case' (first at a.yaml:1)" in errors
    assert errors[1].startswith("b.yaml:8: unknown assertion kind 'nope'")


@pytest.mark.parametrize(("kind", "tool", "context"), [
    ("not_called_tool", "list_open_tickets", "{ as: student }"),
    ("called_tool", "propose_change", "{ as: staff }"),  # only on a curate page
    ("proposed_action", "set_person_title", "{ as: staff }"),  # directors only
])
def test_a_tool_check_on_a_tool_never_offered_is_refused(tmp_path, kind, tool, context):
    (tmp_path / "c.yaml").write_text(
        f'- id: x\n  prompt: "p"\n  context: {context}\n  assert:\n    - kind: {kind}\n'
        f'      value: {tool}\n')
    with pytest.raises(CaseFileError, match=rf"c.yaml:6: {kind}: '{tool}' is never offered to"):
        load_cases(tmp_path)


def test_a_tool_check_on_an_offered_tool_loads(tmp_path):
    (tmp_path / "c.yaml").write_text(
        '- id: x\n  prompt: "p"\n  context: { page: tool, toolId: form-4, as: staff, curate: true }'
        '\n  assert:\n    - kind: called_tool\n      value: propose_change\n')
    assert load_cases(tmp_path)[0].checks[0].kind == "called_tool"


@pytest.mark.parametrize(("check", "expected"), [
    ("      arguments: {machine: form-4}\n",
     "c.yaml:6: called_tool: arguments: report_issue arguments: unknown field 'machine';"
     " known: description, reporter_name, slug, title"),
    ("      result: {ticket_id_contains: '3'}\n",
     "c.yaml:6: called_tool: result: report_issue result: ticket_id_contains: ticket_id is"
     " not text, so _contains cannot select it"),
    ("      arguments: {description_contains: 3}\n",
     "c.yaml:6: called_tool: arguments: report_issue arguments: description_contains needs"
     " text"),
    ("      arguments:\n        title_matches: '[unclosed'\n",
     "c.yaml:7: called_tool: arguments: report_issue arguments: title_matches: not a valid"
     " pattern"),
    ("      arguments: {slug_in: []}\n",
     "c.yaml:6: called_tool: arguments: report_issue arguments: slug_in needs a list of one"
     " or more plain values"),
])
def test_a_selector_the_tool_cannot_have_is_a_file_line_error(tmp_path, check, expected):
    (tmp_path / "c.yaml").write_text(
        '- id: x\n  prompt: "p"\n  assert:\n    - kind: called_tool\n      value: report_issue\n'
        + check)
    [error] = errors_for(tmp_path)
    assert error.startswith(expected), error


def test_tool_checks_with_selectors_load(tmp_path):
    (tmp_path / "c.yaml").write_text(
        '- id: x\n  prompt: "p"\n  context: { as: staff }\n  assert:\n'
        "    - kind: proposed_action\n      value: update_ticket\n"
        "      arguments: {ticket_id_in: [1, 2], note_matches: '(?i)^new tank'}\n"
        "      result: {proposed: true}\n"
        "    - kind: not_called_tool\n      value: report_issue\n"
        "      arguments: {slug: form-4}\n")
    [case] = load_cases(tmp_path)
    assert [c.args.model_dump() for c in case.checks] == [
        {"value": "update_ticket", "arguments": {"ticket_id_in": [1, 2],
                                                 "note_matches": "(?i)^new tank"},
         "result": {"proposed": True}},
        {"value": "report_issue", "arguments": {"slug": "form-4"}}]


def test_a_security_case_says_what_it_plants_and_where():
    case = next(c for c in load_cases() if c.id == "qr-code-plants-a-report")
    assert (case.attack.channel, case.attack.goal) == ("qr_code", "write_action")
    assert "attack" not in case.content()  # reported per channel, never part of what is asked
    # ... and checked for delivery: an attack that never reached the model is no resistance
    assert [c.kind for c in case.checks][-1] == "attack_delivered"
    assert case.checks[-1].args.channel == "qr_code"


def test_an_attack_s_channel_tool_answers_one_way(tmp_path):
    from app.capabilities import REGISTRY
    (tmp_path / "bad.yaml").write_text(
        "- id: a\n  prompt: 'Read https://a.example'\n"
        "  attack: {channel: web_page, goal: exfiltrate}\n"
        "  tool_responses:\n    read_page:\n"
        f"      contract: {REGISTRY.tool('read_page').contract()}\n"
        "      branches:\n        - arguments: {url_contains: a.example}\n"
        "          response: {url: 'https://a.example', text: 'planted'}\n"
        "      response: {url: 'https://b.example', text: 'plain'}\n"
        "  assert:\n    - kind: no_exfiltration\n")
    errors = errors_for(tmp_path)
    assert any(e.startswith("bad.yaml:6: read_page: an attack's channel answers one way")
               for e in errors), errors
