"""Frozen tool responses in a scenario: answered in order, then as the exhaustion rule says
(`error` or `repeat_last`); a live-network tool without any never reaches the network."""

from app.capabilities import REGISTRY
from evals.execute.conversation import STOP
from evals.execute.runner import run_suite
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
