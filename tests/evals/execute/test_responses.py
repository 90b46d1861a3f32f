"""Frozen tool responses in a scenario and in a case: answered in order, then as the exhaustion
rule says (`error` or `repeat_last`); a live-network tool without any never reaches the network
(in a case it stays the stub, as do writes). Branches by argument selectors and state, the
default, expressions, delays (the sleep patched) and the state each conversation and attempt
starts afresh."""

import pytest
from pydantic import BaseModel

from app.capabilities import REGISTRY, Tool, ToolError
from evals.execute import responses as frozen_module
from evals.execute.agent import all_contexts
from evals.execute.attempt import attempt
from evals.execute.conversation import STOP
from evals.execute.executors import Setup
from evals.execute.responses import FrozenResponder
from evals.execute.runner import run_suite
from evals.execute.stubs import STUB_RESULTS
from evals.load.cases import load_cases
from evals.load.responses import ResponseState, ToolResponses
from tests.evals.load.helpers import item_of
from tests.fakes import ScriptedModel, call, say

READ_PAGE = REGISTRY.tool("read_page").contract()
FROZEN = f"""\
- id: page
  context: {{as: staff, page: tool, toolId: form-4, curate: true}}
  visitor: {{who: staff, wants: the build volume}}
  opening: read the spec page
  max_turns: 1
  tool_responses:
    read_page:
      contract: {READ_PAGE}
      responses: [{{url: "https://x.example", text: "Build volume 200 mm"}}, {{error: "gone"}}]
      exhausted: error
  expect_actions:
    - tool: read_page
      result: {{text_contains: "200 mm"}}
"""


async def test_frozen_responses_answer_in_order_then_as_the_exhaustion_rule_says(env, tmp_path):
    model = ScriptedModel(*[call("read_page", url="https://x.example")] * 3, say("200 mm."))
    item = item_of(tmp_path, FROZEN)
    [result] = await run_suite(env, [item], model, visitor=ScriptedModel(say(STOP)))
    results = [c.result for c in result.attempts[0].tool_calls]
    assert results == [{"url": "https://x.example", "text": "Build volume 200 mm"},
                       {"error": "gone"},
                       {"error": "read_page has no further response in this test"}]
    assert result.status == "PASS"


async def test_a_live_tool_without_a_frozen_response_never_reaches_the_network(env, tmp_path,
                                                                                monkeypatch):
    import app.capabilities.read_page as read_page

    async def no_network(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(read_page, "fetch_page", no_network)
    text = FROZEN.replace(FROZEN[FROZEN.index("  tool_responses:"):FROZEN.index(
        "  expect_actions:")], "")
    item = item_of(tmp_path, text)
    [result] = await run_suite(env, [item], ScriptedModel(call("read_page", url="https://a.b"),
                                                          say("I could not read it.")),
                               visitor=ScriptedModel(say(STOP)))
    [c] = result.attempts[0].tool_calls
    assert c.result == {"error": "the web cannot be read in this test"}


async def test_repeat_last_answers_with_the_last_response_once_the_sequence_runs_out(
        env, tmp_path):
    text = FROZEN.replace("exhausted: error", "exhausted: repeat_last").replace(
        ', {{error: "gone"}}', "").replace(', {error: "gone"}', "")
    model = ScriptedModel(*[call("read_page", url="https://x.example")] * 3, say("200 mm."))
    [result] = await run_suite(env, [item_of(tmp_path, text)], model,
                               visitor=ScriptedModel(say(STOP)))
    texts = [c.result_map.get("text") for c in result.attempts[0].tool_calls]
    assert texts == ["Build volume 200 mm"] * 3


# A case's frozen responses: the same responder, over the case's stubbed tools ------------------

CASE = f"""\
- id: page
  prompt: "What build volume does https://formlabs.example/form-4 give?"
  context: {{as: staff}}
  tool_responses:
    read_page:
      contract: {READ_PAGE}
      responses:
        - {{url: "https://formlabs.example/form-4", text: "Build volume 200 x 125 x 210 mm"}}
        - {{error: "gone"}}
  assert:
    - kind: called_tool
      value: read_page
      arguments: {{url_contains: formlabs.example}}
      result: {{text_contains: "200 x 125"}}
"""


def case_of(tmp_path, text=CASE):
    (tmp_path / "c.yaml").write_text(text)
    return load_cases(tmp_path)


async def test_a_cases_frozen_response_is_what_the_model_reads(env, tmp_path):
    model = ScriptedModel(call("read_page", url="https://formlabs.example/form-4"),
                          say("The page gives 200 x 125 x 210 mm."))
    [result] = await run_suite(env, case_of(tmp_path), model)
    tool_message = model.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "Build volume 200 x 125 x 210 mm" in tool_message["content"]
    assert result.status == "PASS", result.attempts[0].checks


async def test_a_cases_sequence_runs_out_as_its_exhaustion_rule_says(env, tmp_path):
    model = ScriptedModel(*[call("read_page", url="https://formlabs.example/form-4")] * 3,
                          say("200 x 125 x 210 mm."))
    [result] = await run_suite(env, case_of(tmp_path), model)
    assert [c.result for c in result.attempts[0].tool_calls] == [
        {"url": "https://formlabs.example/form-4", "text": "Build volume 200 x 125 x 210 mm"},
        {"error": "gone"}, {"error": "read_page has no further response in this test"}]
    # a retry, or the next case, starts the sequence again
    again = ScriptedModel(call("read_page", url="https://formlabs.example/form-4"), say("ok"))
    [second] = await run_suite(env, case_of(tmp_path), again)
    assert second.attempts[0].tool_calls[0].result_map["text"].startswith("Build volume")


async def test_tools_without_frozen_responses_stay_the_cases_stubs(env, tmp_path):
    tickets = REGISTRY.tool("list_open_tickets").contract()
    text = f"""\
- id: queue
  prompt: "What's open? And read https://a.example for me."
  context: {{as: staff}}
  tool_responses:
    list_open_tickets:
      contract: {tickets}
      response: {{tickets: [], count: 0}}
    update_ticket:
      contract: {REGISTRY.tool("update_ticket").contract()}
      response: {{error: "ticket 9 does not exist"}}
  assert:
    - kind: called_tool
      value: list_open_tickets
      result: {{count: 0}}
"""
    model = ScriptedModel(call("list_open_tickets"), call("read_page", url="https://a.example"),
                          call("report_issue", slug="form-4", title="Tank noise",
                               description="Grinding noise."),
                          call("update_ticket", ticket_id=9, status="resolved"),
                          say("Nothing is open."))
    [result] = await run_suite(env, case_of(tmp_path, text), model)
    results = {c.name: c.result for c in result.attempts[0].tool_calls}
    assert results == {"list_open_tickets": {"tickets": [], "count": 0},
                       "read_page": STUB_RESULTS["read_page"],       # never the network
                       "report_issue": STUB_RESULTS["report_issue"],  # a write stays stubbed
                       "update_ticket": {"error": "ticket 9 does not exist"}}  # ... unless frozen
    assert result.status == "PASS"


async def test_a_frozen_agent_still_answers_from_the_cases_frozen_responses(env, tmp_path):
    cases = case_of(tmp_path)
    frozen = await all_contexts(env, cases)
    model = ScriptedModel(call("read_page", url="https://formlabs.example/form-4"), say("ok"))
    done = await attempt(cases[0], Setup(env, model, frozen=frozen))
    assert done.tool_calls[0].result_map["text"] == "Build volume 200 x 125 x 210 mm"


# Branches, expressions, delays and states: the responder alone --------------------------------

SEARCH = REGISTRY.tool("search_catalog")
TICKETS = REGISTRY.tool("list_open_tickets")
REPORT = REGISTRY.tool("report_issue")
UPDATE = REGISTRY.tool("update_ticket")
OPEN = {"tickets": [{"id": 7, "title": "Smoke", "status": "open", "machine": "Trotec",
                     "slug": "trotec-speedy-400"}], "count": 1}
NONE_OPEN = {"tickets": [], "count": 0}
STATES = ResponseState(states=("open", "resolved"), initial="open")


def frozen(tool, **entry):
    return ToolResponses.model_validate({"contract": tool.contract(), **entry})


def found(note):
    return {"response": {"machines": [], "note": note}}


async def ask(responder, tool, **arguments):
    """What the tool answers the call, its error as {"error": text} as the loop records it."""
    [answering] = responder.answering([tool])
    try:
        return await answering.run(None, tool.args.model_validate(arguments))
    except ToolError as exc:
        return {"error": str(exc)}


BY_SELECTOR = frozen(SEARCH, branches=[
    {"arguments": {"query": "laser cutter"}, **found("is")},
    {"arguments": {"query_in": ["printer", "3d printer"]}, **found("in")},
    {"arguments": {"query_contains": "resin"}, **found("contains")},
    {"arguments": {"query_matches": r"^cnc\b"}, **found("matches")},
    {"arguments": {"query_contains": "laser"}, **found("a later branch")},
], response={"machines": [], "note": "default"})


@pytest.mark.parametrize(("query", "note"), [
    (" Laser Cutter ", "is"),              # text equals case-insensitively, ends trimmed
    ("3D printer", "in"),
    ("clear RESIN prints", "contains"),
    ("CNC router", "matches"),
    ("laser cutter for resin", "contains"),  # the first branch that fits answers
    ("laser engraver", "a later branch"),
    ("a loom", "default"),                  # none fits: the default
    ("a cnc", "default"),
])
async def test_a_call_gets_the_first_branch_its_arguments_fit_else_the_default(query, note):
    answer = await ask(FrozenResponder({"search_catalog": BY_SELECTOR}), SEARCH, query=query)
    assert answer["note"] == note


async def test_no_fitting_branch_and_no_default_is_the_tools_error():
    only_laser = frozen(SEARCH, branches=[{"arguments": {"query_contains": "laser"},
                                           **found("laser")}])
    responder = FrozenResponder({"search_catalog": only_laser})
    assert (await ask(responder, SEARCH, query="laser"))["note"] == "laser"
    assert await ask(responder, SEARCH, query="printer") == {
        "error": "search_catalog has no response for these arguments in this test"}


async def test_each_branch_runs_its_own_sequence_and_exhaustion_rule():
    sequences = frozen(SEARCH, branches=[
        {"arguments": {"query_contains": "laser"},
         "responses": [{"machines": [], "note": "laser 1"}, {"error": "laser busy"}]},
        {"arguments": {"query_contains": "printer"}, "exhausted": "repeat_last",
         "responses": [{"machines": [], "note": "printer 1"}, {"machines": [], "note": "p 2"}]},
    ])
    responder = FrozenResponder({"search_catalog": sequences})
    answers = [await ask(responder, SEARCH, query=q) for q in
               ["laser", "printer", "laser", "printer", "laser", "printer"]]
    assert answers == [
        {"machines": [], "note": "laser 1"}, {"machines": [], "note": "printer 1"},
        {"error": "laser busy"}, {"machines": [], "note": "p 2"},
        {"error": "search_catalog has no further response in this test"},
        {"machines": [], "note": "p 2"}]


async def test_expressions_echo_the_arguments_as_text_or_as_the_whole_value():
    details = REGISTRY.tool("get_machine_details")
    echo = frozen(details, response={
        "slug": "{{ args.slug }}", "name": "The {{ args.slug }} ({{ args.slug | default('?') }})"})
    answer = await ask(FrozenResponder({"get_machine_details": echo}), details, slug="form-4")
    assert answer == {"slug": "form-4", "name": "The form-4 (form-4)"}

    class Args(BaseModel):
        ticket_id: int
        urgent: bool = False

    class Result(BaseModel):
        ticket_id: int
        urgent: bool
        title: str

    async def never(ctx, args):
        raise AssertionError("the real tool ran")

    tool = Tool(name="toy", description="", args=Args, kind="read", run=never, result=Result)
    whole = ToolResponses(contract=tool.contract(), response={
        "ticket_id": "{{ args.ticket_id }}", "urgent": "{{ args.urgent }}",
        "title": "Ticket {{ args.ticket_id }}, urgent: {{ args.urgent }}"})
    answer = await ask(FrozenResponder({"toy": whole}), tool, ticket_id=7, urgent=True)
    assert answer == {"ticket_id": 7, "urgent": True, "title": "Ticket 7, urgent: true"}


async def test_a_delay_is_waited_before_its_branch_answers(monkeypatch):
    waited = []

    async def sleep(seconds):
        waited.append(seconds)

    monkeypatch.setattr(frozen_module, "sleep", sleep)
    slow = frozen(SEARCH, branches=[{"arguments": {"query_contains": "laser"}, "delay_s": 3,
                                     **found("laser")}],
                  response={"machines": [], "note": "quick"}, delay_s=0.5)
    responder = FrozenResponder({"search_catalog": slow})
    await ask(responder, SEARCH, query="laser")
    assert waited == [3]
    await ask(responder, SEARCH, query="printer")
    assert waited == [3, 0.5]
    await ask(FrozenResponder({"search_catalog": BY_SELECTOR}), SEARCH, query="laser")
    assert waited == [3, 0.5]  # no delay written: none waited


def state_responses(**update):
    """list_open_tickets answers by state; report_issue moves it when it answers;
    update_ticket's card moves it when confirmed."""
    return {
        # a static response is a sequence of one: repeat_last answers every call with it
        "list_open_tickets": frozen(TICKETS, branches=[
            {"state": "resolved", "response": NONE_OPEN, "exhausted": "repeat_last"}],
            response=OPEN, exhausted="repeat_last"),
        "report_issue": frozen(REPORT, response={"ticket_id": 8, "machine": "Form 4",
                                                  "filed": True, "anonymous": True},
                               set_state="open"),
        "update_ticket": frozen(UPDATE, response={
            "proposed": True, "proposal_id": "p-{{ args.ticket_id }}",
            "summary": "Ticket {{ args.ticket_id }}: {{ args.status }}", "note": "Confirm it."},
            on_confirm="resolved", **update),
    }


async def test_a_confirmed_card_moves_the_state_the_other_tools_answer_by():
    responder = FrozenResponder(state_responses(), STATES)
    assert await ask(responder, TICKETS) == OPEN
    card = await ask(responder, UPDATE, ticket_id=7, status="resolved")
    assert card["proposal_id"] == "p-7" and card["summary"] == "Ticket 7: resolved"
    assert await ask(responder, TICKETS) == OPEN  # proposed is not done
    assert responder.confirm("p-8") is None       # not a card a frozen response proposed
    assert responder.confirm("p-7") == {"proposal_id": "p-7", "status": "applied",
                                        "state": "resolved"}
    assert await ask(responder, TICKETS) == NONE_OPEN
    assert responder.confirm("p-7") is None       # a card is confirmed once
    await ask(responder, REPORT, slug="form-4", title="Tank", description="Cloudy")
    assert responder.state == "open"              # a write moves it when it answers
    assert await ask(responder, TICKETS) == OPEN


async def test_every_responder_starts_from_the_initial_state_and_the_first_response():
    responses = state_responses()
    first = FrozenResponder(responses, STATES)
    await ask(first, UPDATE, ticket_id=7, status="resolved")
    first.confirm("p-7")
    assert await ask(first, TICKETS) == NONE_OPEN
    second = FrozenResponder(responses, STATES)  # the next conversation, or a retry
    assert second.state == "open"
    assert await ask(second, TICKETS) == OPEN
    assert second.confirm("p-7") is None


async def test_an_error_answer_moves_no_state():
    failing = frozen(REPORT, response={"error": "the queue is down"}, set_state="resolved")
    responder = FrozenResponder({"report_issue": failing}, STATES)
    answer = await ask(responder, REPORT, slug="form-4", title="Tank")
    assert answer == {"error": "the queue is down"}
    assert responder.state == "open"


# ... and through the executors: a scenario's confirmation, a case's attempts -------------------

STATEFUL = f"""\
- id: resolve-frozen
  context: {{as: staff, path: /staff/tickets}}
  visitor: {{who: staff, wants: to close ticket 7}}
  opening: close ticket 7, the lens is clean
  max_turns: 2
  confirm: true
  styles: [calm, hurried]
  response_state: {{states: [open, resolved], initial: open}}
  tool_responses:
    update_ticket:
      contract: {UPDATE.contract()}
      response: {{proposed: true, proposal_id: "p-{{{{ args.ticket_id }}}}",
                 summary: "Ticket {{{{ args.ticket_id }}}}: {{{{ args.status }}}}", note: n}}
      on_confirm: resolved
    list_open_tickets:
      contract: {TICKETS.contract()}
      branches:
        - state: resolved
          response: {{tickets: [], count: 0}}
      response:
        count: 1
        tickets: [{{id: 7, title: Smoke, status: open, machine: Trotec, slug: trotec-speedy-400}}]
  expect_actions:
    - tool: update_ticket
      arguments: {{ticket_id: 7, status: resolved}}
    - tool: list_open_tickets
      result: {{count: 0}}
"""


async def test_a_scenarios_confirmation_moves_the_state_for_that_conversation_only(env,
                                                                                  tmp_path):
    def script():
        return ScriptedModel(call("list_open_tickets"),
                             call("update_ticket", ticket_id=7, status="resolved"),
                             say("Confirm the card."), call("list_open_tickets"),
                             say("It is closed."))

    for style in ("calm", "hurried"):  # two conversations: each starts with the ticket open
        [result] = await run_suite(env, [item_of(tmp_path, STATEFUL, style)], script(),
                                   visitor=ScriptedModel(say("is it closed now?")))
        calls = result.attempts[0].tool_calls
        assert [(c.name, c.result_map.get("count")) for c in calls] == [
            ("list_open_tickets", 1), ("update_ticket", None), ("confirm_card", None),
            ("list_open_tickets", 0)]
        assert calls[2].result == {"proposal_id": "p-7", "status": "applied",
                                   "state": "resolved"}
        assert result.status == "PASS", [c.reason for c in result.attempts[0].checks]


async def test_a_cases_attempts_each_start_from_the_initial_state(env, tmp_path):
    text = f"""\
- id: queue-after-report
  prompt: "Report the Form 4's tank, then show me the queue."
  context: {{as: staff}}
  response_state: {{states: [quiet, reported], initial: quiet}}
  tool_responses:
    report_issue:
      contract: {REPORT.contract()}
      response: {{ticket_id: 8, machine: Form 4, filed: true, anonymous: false}}
      set_state: reported
    list_open_tickets:
      contract: {TICKETS.contract()}
      branches:
        - state: reported
          response: {{count: 1, tickets: [{{id: 8, title: Tank, status: open,
                      machine: Form 4, slug: form-4}}]}}
      response: {{tickets: [], count: 0}}
  assert:
    - kind: called_tool
      value: list_open_tickets
"""
    [case] = case_of(tmp_path, text)
    model = ScriptedModel(call("report_issue", slug="form-4", title="Tank clouded"),
                          call("list_open_tickets"), say("Ticket 8 is open."))
    first = await attempt(case, Setup(env, model))
    assert first.tool_calls[1].result_map["count"] == 1
    again = await attempt(case, Setup(env, ScriptedModel(call("list_open_tickets"),
                                                         say("Nothing is open."))))
    assert again.tool_calls[0].result_map["count"] == 0
