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
     "c.yaml:10: control character U+0000 (written as an escape)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {error: \"timed\\0 out\"}",
     "c.yaml:7: control character U+0000 (written as an escape)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {error: \"timed\\ud800 out\"}",
     "c.yaml:7: lone surrogate U+D800 (written as an escape)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {error: '{{ args.slug | default(\"\\ud800\") }}'}",
     "c.yaml:7: list_open_tickets response 1: error:"),
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

    from evals.load.response_validation import _unknown_keys

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


# Branches, expressions, delays and states -----------------------------------------------------

UPDATE = REGISTRY.tool("update_ticket").contract()
STATES = "  response_state: {{states: [open, resolved], initial: open}}\n"  # a format template
TICKET = "{id: 7, title: Smoke, status: open, machine: Trotec, slug: trotec-speedy-400}"


@pytest.mark.parametrize(("frozen", "expected"), [
    # a selector names a field the tool's arguments do not have
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {machine: form-4}\n          response: {tickets: [], count: 0}",
     "c.yaml:8: list_open_tickets branch 1 arguments: unknown field 'machine'; known: slug"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug_in: form-4}\n          response: {tickets: [], count: 0}",
     "c.yaml:8: list_open_tickets branch 1 arguments: slug_in needs a list of one or more"),
    # an expression names an argument the tool does not have
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug: form-4}\n          response:\n            count: 1\n"
     "            tickets:\n              - {id: 1, title: '{{ args.title }}', status: open,"
     " machine: Form 4, slug: form-4}",
     "c.yaml:12: list_open_tickets branch 1 response 1: tickets.0.title: args.title:"
     " list_open_tickets has no argument 'title' (arguments: slug)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n"
     "      response: {error: 'no tickets for {{ slug }}'}",
     "c.yaml:7: list_open_tickets response 1: error: {{ slug }} is not an expression"),
    # a branch's response does not fit the result schema
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug: form-4}\n          response: {tickets: [], count: many}",
     "c.yaml:9: list_open_tickets branch 1 response 1 does not fit the result schema: count:"
     " Input should be a valid integer"),
    # ... nor does a member of a branch's sequence
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug_contains: form}\n          responses:\n"
     "            - {tickets: [], count: 0}\n            - {tickets: nope, count: 0}",
     "c.yaml:11: list_open_tickets branch 1 response 2 does not fit the result schema: tickets:"
     " Input should be a valid list"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug_matches: '^form'}\n          responses:\n"
     "            - {tickets: [], count: 0}\n            - {tickets: [], count: 0, more: true}",
     "c.yaml:11: list_open_tickets branch 1 response 2: more: not a field of the tool's result"),
    # an expression fits with a sample slug, not when the optional slug is left out
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      response:\n        count: 1\n"
     "        tickets: [{id: 7, title: Smoke, status: open, machine: T, slug: '{{ args.slug }}'}]",
     'c.yaml:8: list_open_tickets response 1 does not fit the result schema with the arguments'
     ' {"slug": null}: tickets.0.slug: Input should be a valid string'),
    # an absurd delay
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug: form-4}\n          response: {tickets: [], count: 0}\n"
     "          delay_s: 600",
     "c.yaml:10: tool_responses.list_open_tickets.branches.0.delay_s: Value error, 600 s is not"
     " a delay from 0 to 60 s (got 600)"),
    (f"    list_open_tickets: {{contract: {TICKETS}, response: {{count: 0}}, delay_s: -1}}",
     "c.yaml:5: tool_responses.list_open_tickets.delay_s: Value error, -1 s is not a delay"),
    (f"    list_open_tickets: {{contract: {TICKETS}, response: {{count: 0}}, delay_s: true}}",
     "c.yaml:5: tool_responses.list_open_tickets.delay_s: Value error, True is not a number"),
    # a branch that selects nothing, or answers nothing
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - response: {tickets: [], count: 0}",
     "c.yaml:8: tool_responses.list_open_tickets.branches.0: Value error, a branch selects by"
     " arguments:, state: or both"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug: form-4}",
     "c.yaml:8: tool_responses.list_open_tickets.branches.0: Value error, a branch answers with"
     " response:"),
    # one response or a sequence, never both, in a branch as in the default
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - arguments: {slug: form-4}\n          response: {tickets: [], count: 0}\n"
     "          responses: [{tickets: [], count: 0}]",
     "c.yaml:8: tool_responses.list_open_tickets.branches.0: Value error, give either response:"
     " or responses:, not both"),
    (f"    list_open_tickets: {{contract: {TICKETS}, response: {{count: 0}}, responses:"
     " [{count: 0}]}",
     "c.yaml:5: tool_responses.list_open_tickets: Value error, give either response: (static)"
     " or responses: (a sequence), not both"),
    # a state's name is a word
    (f"    list_open_tickets: {{contract: {TICKETS}, response: {{count: 0}},"
     " set_state: 'not yet'}",
     "c.yaml:5: tool_responses.list_open_tickets.set_state: String should match pattern"),
    # what belongs to a default there is none of
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      exhausted: repeat_last\n"
     "      branches:\n        - arguments: {slug: form-4}\n"
     "          response: {tickets: [], count: 0}",
     "c.yaml:7: list_open_tickets: exhausted: belongs to the default response: or responses:,"
     " and there is none (set it in a branch)"),
    # a state with no states declared
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - state: open\n          response: {tickets: [], count: 0}",
     "c.yaml:8: list_open_tickets branch 1: state: 'open': the item declares no states"),
    # on_confirm needs an action tool, and an item that confirms its cards (a case never does)
    (f"    update_ticket:\n      contract: {UPDATE}\n      response: {{proposed: true,"
     " proposal_id: p-1, summary: s, note: n}\n      on_confirm: resolved",
     "c.yaml:8: update_ticket: on_confirm: 'resolved': the item declares no states"),
])
def test_each_bad_branch_expression_delay_or_state_is_a_file_line_error(tmp_path, frozen,
                                                                        expected):
    errors = case_errors(tmp_path, frozen)
    assert any(e.startswith(expected) for e in errors), errors


@pytest.mark.parametrize(("frozen", "expected"), [
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      branches:\n"
     "        - state: closed\n          response: {tickets: [], count: 0}",
     "c.yaml:9: list_open_tickets branch 1: state: unknown state 'closed' (states: open,"
     " resolved)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      response: {{tickets: [],"
     " count: 0}\n      set_state: done",
     "c.yaml:9: list_open_tickets: set_state: unknown state 'done' (states: open, resolved)"),
    (f"    list_open_tickets:\n      contract: {TICKETS}\n      response: {{tickets: [],"
     " count: 0}\n      on_confirm: resolved",
     "c.yaml:9: list_open_tickets: on_confirm: list_open_tickets is not an action tool"),
    (f"    update_ticket:\n      contract: {UPDATE}\n      response: {{proposed: true,"
     " proposal_id: p-1, summary: s, note: n}\n      on_confirm: resolved",
     "c.yaml:9: update_ticket: on_confirm: no card is confirmed here (a scenario with confirm:"
     " true confirms them; a case never does)"),
])
def test_states_are_the_items_own_and_on_confirm_needs_a_card_that_is_confirmed(
        tmp_path, frozen, expected):
    case = STAFF_CASE.replace("  tool_responses:\n", STATES + "  tool_responses:\n")
    errors = case_errors(tmp_path, frozen, case)
    assert any(e.startswith(expected) for e in errors), errors


@pytest.mark.parametrize(("states", "expected"), [
    ("{{states: [open, resolved], initial: closed}}",
     "c.yaml:4: response_state: Value error, initial: 'closed' is not one of the states"
     " (open, resolved)"),
    ("{{states: [open, open], initial: open}}",
     "c.yaml:4: response_state: Value error, states: open listed twice"),
    ("{{states: [open], initial: open}}",
     "c.yaml:4: response_state.states: Tuple should have at least 2 items"),
])
def test_a_bad_state_machine_is_a_file_line_error(tmp_path, states, expected):
    case = STAFF_CASE.replace("  tool_responses:\n",
                              f"  response_state: {states}\n  tool_responses:\n")
    errors = case_errors(tmp_path, f"    list_open_tickets: {{contract: {TICKETS},"
                                   " response: {tickets: [], count: 0}}", case)
    assert any(e.startswith(expected) for e in errors), errors


BRANCHED = f"""\
    list_open_tickets:
      contract: {TICKETS}
      branches:
        - state: open
          arguments: {{slug_in: [trotec-speedy-400, null]}}
          response: {{tickets: [{TICKET}], count: 1}}
        - arguments: {{slug_matches: '^form'}}
          responses:
            - tickets: [{{id: 8, title: "Tank on {{{{ args.slug }}}}", status: open,
                         machine: Form 4, slug: "{{{{ args.slug | default('form-4') }}}}"}}]
              count: 1
            - {{error: "no tickets for {{{{ args.slug }}}}"}}
          exhausted: repeat_last
          delay_s: 3
      response: {{tickets: [], count: 0}}
      set_state: resolved"""


def test_a_case_with_branches_expressions_a_delay_and_states_loads(tmp_path):
    case = STAFF_CASE.replace("  tool_responses:\n", STATES + "  tool_responses:\n")
    write(tmp_path, case.format(frozen=BRANCHED), "c.yaml")
    [loaded] = load_cases(tmp_path)
    frozen = loaded.tool_responses["list_open_tickets"]
    assert [b.state for b in frozen.branches] == ["open", None]
    assert frozen.branches[1].delay_s == 3
    assert frozen.sequence == [{"tickets": [], "count": 0}]  # the default, as before
    assert loaded.response_state.initial == "open"


def test_a_scenario_that_confirms_may_move_the_state_on_confirm(tmp_path):
    text = f"""\
- id: resolve
  context: {{as: staff, path: /staff/tickets}}
  visitor: {{who: staff, wants: to close ticket 7}}
  confirm: true
  response_state: {{states: [open, resolved], initial: open}}
  tool_responses:
    update_ticket:
      contract: {UPDATE}
      response: {{proposed: true, proposal_id: "p-{{{{ args.ticket_id }}}}",
                 summary: "Ticket {{{{ args.ticket_id }}}} → {{{{ args.status }}}}", note: n}}
      on_confirm: resolved
    list_open_tickets:
      contract: {TICKETS}
      branches:
        - state: resolved
          response: {{tickets: [], count: 0}}
      response: {{tickets: [{TICKET}], count: 1}}
  criteria:
    - statement: The assistant proposes the change.
"""
    [scenario], _ = load_scenarios(write(tmp_path, text))
    assert scenario.tool_responses["update_ticket"].on_confirm == "resolved"
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(write(tmp_path, text.replace("confirm: true", "confirm: false")
                             .replace("state: resolved", "state: shut")))
    assert err.value.errors == [
        "s.yaml:11: update_ticket: on_confirm: no card is confirmed here (a scenario with"
        " confirm: true confirms them; a case never does)",
        "s.yaml:15: list_open_tickets branch 1: state: unknown state 'shut' (states: open,"
        " resolved)"]


def test_a_changed_condition_expression_delay_or_state_is_a_changed_plan(tmp_path):
    case = STAFF_CASE.replace("  tool_responses:\n", STATES + "  tool_responses:\n")

    def plan_of(frozen, text=case):
        write(tmp_path, text.format(frozen=frozen), "c.yaml")
        return plan_info(load_cases(tmp_path), judge_model=None, judge_prompt_hash=None,
                         repeat=1)

    before = plan_of(BRANCHED)
    for old, new in [("slug_matches: '^form'", "slug_matches: '^trotec'"),
                     ("default('form-4')", "default('form-3')"),
                     ("delay_s: 3", "delay_s: 4"), ("- state: open", "- state: resolved"),
                     ("set_state: resolved", "set_state: open")]:
        assert old in BRANCHED
        assert plan_of(BRANCHED.replace(old, new)).changes_since(before) == [
            "case edited: queue"], new
    moved = case.replace("initial: open", "initial: resolved")
    assert plan_of(BRANCHED, moved).changes_since(before) == ["case edited: queue"]


def test_responses_written_before_branches_existed_hash_as_they_did():
    from evals.load.responses import ToolResponses

    old = {"contract": TICKETS, "response": None, "responses": [{"tickets": [], "count": 0}],
           "exhausted": "repeat_last"}
    assert ToolResponses.model_validate(old).content() == old


def test_a_response_given_whole_is_checked_for_control_characters_too():
    # A file cannot hold one any more (the reader refuses it, escape or not); a response
    # handed over whole, as the workspace's examples are, is checked on its own.
    from app.capabilities import REGISTRY
    from evals.load.response_validation import result_errors

    tool = REGISTRY.all_tools()["list_open_tickets"]
    assert result_errors(tool, {"error": "timed\x00 out"}) == [
        "response: error: text holds the control character U+0000"]
    assert result_errors(tool, {"error": "timed out"}) == []
