"""Frozen tool responses, validated once for cases and scenarios alike: each problem a
file:line error; a case's QR codes name its own photos; both are part of the plan."""

import pytest

from app.capabilities import REGISTRY
from evals.load.cases import CaseFileError, load_cases
from evals.load.plan import plan_info
from evals.load.scenarios import ScenarioFileError, load_scenarios
from tests.evals.load.helpers import MINIMAL, write

READ_PAGE = REGISTRY.tool("read_page").contract()
TICKETS = REGISTRY.tool("list_open_tickets").contract()
STAFF_CASE = """\
- id: queue
  prompt: "What's in the queue?"
  context: {{ as: staff }}
  tool_responses:
{frozen}
  assert:
    - kind: called_tool
      value: list_open_tickets
"""


def case_errors(tmp_path, frozen, case=STAFF_CASE):
    write(tmp_path, case.format(frozen=frozen), "c.yaml")
    with pytest.raises(CaseFileError) as err:
        load_cases(tmp_path)
    return err.value.errors


@pytest.mark.parametrize(("frozen", "expected"), [
    ("    teleport: {contract: '000000000000', response: {}}",
     "c.yaml:5: tool_responses: unknown tool 'teleport'"),
    ("    propose_change: {contract: '000000000000', response: {}}",  # curate pages only
     "c.yaml:5: tool_responses: 'propose_change' is never offered to staff on / (offered: "),
    ("    list_open_tickets: {contract: '0123456789ab', response: {tickets: [], count: 0}}",
     f"c.yaml:5: list_open_tickets: its contract changed since these responses were written"
     f" (was 0123456789ab, now {TICKETS})"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      responses:\n"
     "        - {tickets: [], count: 0}\n        - {tickets: [], count: none}",
     "c.yaml:9: list_open_tickets response 2 does not fit the result schema: count: Input"
     " should be a valid integer"),
    (f"    list_open_tickets: {{contract: {TICKETS}}}",
     "c.yaml:5: tool_responses.list_open_tickets: Value error, give either response:"
     " (static) or responses: (a sequence)"),
    (f"    list_open_tickets: {{contract: {TICKETS}, response: {{count: 0}}, exhausted: never}}",
     "c.yaml:5: tool_responses.list_open_tickets.exhausted: Input should be 'error' or"
     " 'repeat_last'"),
])
def test_each_bad_frozen_response_of_a_case_is_a_file_line_error(tmp_path, frozen, expected):
    errors = case_errors(tmp_path, frozen)
    assert any(e.startswith(expected) for e in errors), errors


def test_a_scenario_is_held_to_the_same_validation(tmp_path):
    text = MINIMAL + (f"  tool_responses:\n    list_open_tickets: {{contract: {TICKETS},"
                      " response: {tickets: [], count: 0}}\n")
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(write(tmp_path, text))
    [error] = err.value.errors
    assert error.startswith("s.yaml:6: tool_responses: 'list_open_tickets' is never offered to"
                            " anonymous visitor on / (offered: get_machine_details,")


def test_a_case_with_frozen_responses_and_qr_codes_loads(tmp_path):
    write(tmp_path, STAFF_CASE.format(frozen=(
        f"    list_open_tickets:\n      contract: {TICKETS}\n"
        "      response: {tickets: [], count: 0}")).replace(
        "  assert:", "  photos: [IMG_2101.jpg]\n  qr_codes:\n    IMG_2101.jpg: []\n  assert:"),
        "c.yaml")
    [case] = load_cases(tmp_path)
    assert case.tool_responses["list_open_tickets"].sequence == [{"tickets": [], "count": 0}]
    assert case.qr_codes == {"IMG_2101.jpg": ()}


@pytest.mark.parametrize(("qr", "expected"), [
    ("  qr_codes:\n    IMG_2060.jpg: [https://lab/tools/form-4]\n",
     "c.yaml:5: qr_codes: 'IMG_2060.jpg' is not one of this case's photos (IMG_2101.jpg)"),
    ("  qr_codes:\n    IMG_2101.jpg: ['']\n",
     "c.yaml:5: qr_codes.IMG_2101.jpg.0: String should have at least 1 character"),
    ("  qr_codes:\n    IMG_2101.jpg: https://lab/tools/form-4\n",
     "c.yaml:5: qr_codes.IMG_2101.jpg: Input should be a valid tuple"),
])
def test_qr_codes_name_the_cases_own_photos(tmp_path, qr, expected):
    case = ('- id: x\n  prompt: "Which one is this?"\n  photos: [IMG_2101.jpg]\n' + qr
            + "  assert:\n    - kind: no_unknown_tools\n")
    errors = case_errors(tmp_path, "", case)
    assert any(e.startswith(expected) for e in errors), errors


def test_the_plan_holds_a_cases_frozen_responses_and_qr_codes(tmp_path):
    def frozen(n):
        return (f"    list_open_tickets:\n      contract: {TICKETS}\n"
                f"      response: {{tickets: [], count: {n}}}")

    def plan_of(text):
        write(tmp_path, text, "c.yaml")
        return plan_info(load_cases(tmp_path), judge_model=None, judge_prompt_hash=None,
                         repeat=1)

    none = plan_of(STAFF_CASE.format(frozen=frozen(0)))
    one = plan_of(STAFF_CASE.format(frozen=frozen(1)))
    assert one.changes_since(none) == ["case edited: queue"]
    photo = STAFF_CASE.format(frozen=frozen(1)).replace(
        "  assert:", "  photos: [IMG_2101.jpg]\n  qr_codes:\n    IMG_2101.jpg: [a]\n  assert:")
    assert plan_of(photo).cases["queue"] != plan_of(photo.replace("[a]", "[b]")).cases["queue"]


@pytest.mark.parametrize(("frozen", "expected"), [
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {tickets: [], count: 0, total: 3}",
     "c.yaml:7: list_open_tickets response 1: total: not a field of the tool's result"
     " (fields: count, tickets)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      responses:\n"
     "        - {tickets: [], count: 0}\n        - {tickets: [], count: 0, next_page: 2}",
     "c.yaml:9: list_open_tickets response 2: next_page: not a field of the tool's result"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      response:\n"
     "        count: 1\n        tickets:\n          - {id: 1, title: \"Smoke\\0\","
     " status: open, machine: Trotec, slug: trotec-speedy-400}",
     "c.yaml:10: list_open_tickets response 1: tickets.0.title: text holds the control"
     " character '\\x00'"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {error: \"timed\\0 out\"}",
     "c.yaml:7: list_open_tickets response 1: error: text holds the control character"),
])
def test_an_unknown_key_or_a_nul_in_a_frozen_response_is_refused(tmp_path, frozen, expected):
    errors = case_errors(tmp_path, frozen)
    assert any(e.startswith(expected) for e in errors), errors


def test_a_key_the_tools_result_leaves_open_is_taken(tmp_path):
    # a ticket's record takes any field (additionalProperties), the result itself does not
    write(tmp_path, STAFF_CASE.format(frozen=(
        f"    list_open_tickets:\n      contract: {TICKETS}\n      response:\n"
        "        count: 1\n        tickets:\n          - {id: 1, title: Smoke, status: open,"
        " machine: Trotec, slug: trotec-speedy-400, opened_by: Sam}")), "c.yaml")
    [case] = load_cases(tmp_path)
    assert case.tool_responses["list_open_tickets"].sequence[0]["count"] == 1


def test_an_unknown_key_inside_an_optional_record_is_found():
    from pydantic import BaseModel

    from evals.load.responses import _unknown_keys

    class Inner(BaseModel):
        a: int

    class Result(BaseModel):
        inner: Inner | None = None
        items: list[Inner] | None = None

    schema = Result.model_json_schema()
    value = {"inner": {"a": 1, "typo": 2}, "items": [{"a": 1, "oops": 3}]}
    assert _unknown_keys(value, schema, schema["$defs"], ()) == [
        ("inner", "typo"), ("items", 0, "oops")]
    assert _unknown_keys({"inner": None}, schema, schema["$defs"], ()) == []
