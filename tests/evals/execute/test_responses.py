"""Frozen tool responses in a scenario and in a case: answered in order, then as the exhaustion
rule says (`error` or `repeat_last`); a live-network tool without any never reaches the network
(in a case it stays the stub, as do writes)."""

from app.capabilities import REGISTRY
from evals.execute.agent import all_contexts
from evals.execute.conversation import STOP
from evals.execute.executors import Setup
from evals.execute.runner import attempt, run_suite
from evals.execute.stubs import STUB_RESULTS
from evals.load.cases import load_cases
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
