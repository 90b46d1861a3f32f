"""The tool-call loop: tools run and their results go back; errors are results; a step limit."""

import json

from app.chat.loop import STEP_LIMIT_NOTE
from app.chat.reply import ModelReply, ToolCallRequest
from tests.app.one_turn import one_turn
from tests.fakes import ScriptedModel, call, say


def _tool_results(model):
    return [json.loads(m["content"]) for m in model.requests[-1]["messages"] if m["role"] == "tool"]


async def test_loop_runs_a_tool_and_feeds_back_its_result(db, settings):
    model = ScriptedModel(call("get_machine_details", slug="form-4"), say("The Form 4 is here."))
    result = await one_turn(db, settings, model, "Tell me about the Form 4")
    assert result.answer == "The Form 4 is here."
    assert [c.name for c in result.tool_calls] == ["get_machine_details"]
    assert result.tool_calls[0].result["specs"]["build_volume"] is None
    assert _tool_results(model)[0]["name"] == "Form 4"
    assert result.usage.prompt_tokens == 20 and result.steps == 2
    assert model.requests[0]["tools"] is not None


async def test_a_tool_error_goes_back_to_the_model_and_the_turn_goes_on(db, settings):
    model = ScriptedModel(call("get_machine_details", slug="glowforge"),
                          say("We do not have that machine."))
    result = await one_turn(db, settings, model, "Glowforge?")
    assert result.tool_calls[0].error == "tool_error"
    assert "no machine with slug 'glowforge'" in _tool_results(model)[0]["error"]
    assert result.answer == "We do not have that machine."


async def test_bad_arguments_unknown_tools_and_bad_json_are_results_not_crashes(db, settings):
    broken = ModelReply(content=None, tool_calls=[
        ToolCallRequest("a", "get_machine_details", "{not json"),
        ToolCallRequest("b", "get_machine_details", json.dumps({"sku": 1})),
        ToolCallRequest("c", "list_open_tickets", "{}"),  # not in an anonymous tool set
    ])
    model = ScriptedModel(broken, say("Sorry."))
    result = await one_turn(db, settings, model, "hi")
    assert [c.error for c in result.tool_calls] == ["bad_json", "bad_args", "unknown_tool"]
    errors = [r["error"] for r in _tool_results(model)]
    assert "arguments are not JSON" in errors[0]
    assert "slug: Field required" in errors[1]
    assert "no tool named 'list_open_tickets'" in errors[2]


async def test_step_limit_forces_a_final_answer_without_tools(db, settings):
    model = ScriptedModel(call("search_catalog", query="laser"), repeat=True)
    model.steps.append(say("final"))  # never reached: repeat replays the first step
    result = await one_turn(db, settings, model, "loop forever", max_steps=2)
    assert len(model.requests) == 3
    assert model.requests[-1]["tools"] is None
    assert model.requests[-1]["messages"][-1]["content"] == STEP_LIMIT_NOTE
    assert len(result.tool_calls) == 2


async def test_arguments_holding_a_lone_surrogate_are_refused_not_run(db, settings):
    # JSON can carry half a UTF-16 pair ("\\ud800"); no text holds one, so neither a tool
    # nor the reply could: the model is told, as for any invalid arguments.
    model = ScriptedModel(call("get_machine_details", slug="form-4\ud800"), say("Sorry."))
    result = await one_turn(db, settings, model, "Tell me about the Form 4")
    [record] = result.tool_calls
    assert record.error == "bad_args" and record.arguments == {"slug": "form-4"}
    assert "slug: holds the lone surrogate U+D800" in _tool_results(model)[0]["error"]
    sent = model.requests[-1]["messages"]
    echoed = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]
    assert json.loads(echoed["function"]["arguments"]) == {"slug": "form-4"}
    json.dumps(sent, ensure_ascii=False).encode()  # what the model is sent is text
    json.dumps(result.to_dict(), ensure_ascii=False, default=str).encode()


async def test_an_unknown_tool_s_name_and_arguments_are_kept_as_text(db, settings):
    model = ScriptedModel(call("no_such_tool\ud800", "call_1", slug="x\udc00"), say("Sorry."))
    result = await one_turn(db, settings, model, "Tell me about the Form 4")
    [record] = result.tool_calls
    assert record.error == "unknown_tool"
    assert (record.name, record.arguments) == ("no_such_tool", {"slug": "x"})
    json.dumps(result.to_dict(), ensure_ascii=False, default=str).encode()
