import json

from app.capabilities import ToolContext
from app.chat.compose import compose_chat, user_message
from app.chat.loop import STEP_LIMIT_NOTE, run_turn
from app.chat.page_context import load_page_context
from app.identity import demo_identity
from tests.fakes import ScriptedModel, call, say


async def _turn(db, settings, model, text, identity=None, path="/", max_steps=4):
    page = await load_page_context(db, path)
    composed = await compose_chat(db, identity=identity, page=page)
    ctx = ToolContext(db=db, settings=settings, identity=identity, page=page)
    return await run_turn(model, composed, [user_message(text)], ctx, max_steps=max_steps)


def _tool_results(model):
    return [json.loads(m["content"]) for m in model.requests[-1]["messages"] if m["role"] == "tool"]


async def test_loop_runs_a_tool_and_feeds_back_its_result(db, settings):
    model = ScriptedModel(call("get_machine_details", slug="form-4"), say("The Form 4 is here."))
    result = await _turn(db, settings, model, "Tell me about the Form 4")
    assert result.answer == "The Form 4 is here."
    assert [c.name for c in result.tool_calls] == ["get_machine_details"]
    assert result.tool_calls[0].result["specs"]["build_volume"] is None
    assert _tool_results(model)[0]["name"] == "Form 4"
    assert result.usage.prompt_tokens == 20 and result.steps == 2
    assert model.requests[0]["tools"] is not None


async def test_a_tool_error_goes_back_to_the_model_and_the_turn_goes_on(db, settings):
    model = ScriptedModel(call("get_machine_details", slug="glowforge"),
                          say("We do not have that machine."))
    result = await _turn(db, settings, model, "Glowforge?")
    assert result.tool_calls[0].error == "tool_error"
    assert "no machine with slug 'glowforge'" in _tool_results(model)[0]["error"]
    assert result.answer == "We do not have that machine."


async def test_bad_arguments_unknown_tools_and_bad_json_are_results_not_crashes(db, settings):
    from app.chat.reply import ModelReply, ToolCallRequest

    broken = ModelReply(content=None, tool_calls=[
        ToolCallRequest("a", "get_machine_details", "{not json"),
        ToolCallRequest("b", "get_machine_details", json.dumps({"sku": 1})),
        ToolCallRequest("c", "list_open_tickets", "{}"),  # not in an anonymous tool set
    ])
    model = ScriptedModel(broken, say("Sorry."))
    result = await _turn(db, settings, model, "hi")
    assert [c.error for c in result.tool_calls] == ["bad_json", "bad_args", "unknown_tool"]
    errors = [r["error"] for r in _tool_results(model)]
    assert "arguments are not JSON" in errors[0]
    assert "slug: Field required" in errors[1]
    assert "no tool named 'list_open_tickets'" in errors[2]


async def test_step_limit_forces_a_final_answer_without_tools(db, settings):
    model = ScriptedModel(call("search_catalog", query="laser"), repeat=True)
    model.steps.append(say("final"))  # never reached: repeat replays the first step
    result = await _turn(db, settings, model, "loop forever", max_steps=2)
    assert len(model.requests) == 3
    assert model.requests[-1]["tools"] is None
    assert model.requests[-1]["messages"][-1]["content"] == STEP_LIMIT_NOTE
    assert len(result.tool_calls) == 2


async def test_action_tool_only_proposes(db, settings):
    staff = await demo_identity(db, "staff")
    ticket = await db.fetchone("SELECT id FROM tickets WHERE status = 'open' ORDER BY id LIMIT 1")
    model = ScriptedModel(
        call("update_ticket", ticket_id=ticket["id"], status="resolved", note="refocused"),
        say("Press Confirm on the card to apply it."),
    )
    result = await _turn(db, settings, model, "Resolve the laser ticket", identity=staff)
    card = result.proposals[0]
    assert card["proposed"] is True and card["tool"] == "update_ticket"
    assert "open → resolved" in card["summary"]
    row = await db.fetchone("SELECT status FROM tickets WHERE id = %s", (ticket["id"],))
    assert row["status"] == "open"
    assert (await db.fetchone("SELECT count(*) AS n FROM ticket_notes"))["n"] == 0


async def test_anonymous_report_is_filed_without_a_name(db, settings):
    model = ScriptedModel(
        call("report_issue", slug="form-4", title="Resin leaking", description="under the tank"),
        say("Filed."),
    )
    result = await _turn(db, settings, model, "The Form 4 is leaking; I'd rather not say my name")
    assert result.tool_calls[0].result["anonymous"] is True
    row = await db.fetchone("SELECT reporter_id, reporter_name FROM tickets WHERE title = %s",
                            ("Resin leaking",))
    assert row == {"reporter_id": None, "reporter_name": None}


async def test_identify_tools_refuses_a_photo_not_in_the_message(db, settings):
    staff = await demo_identity(db, "staff")
    model = ScriptedModel(
        call("identify_tools", attachment_id="nope", items=[{"name": "drill press"}]), say("ok")
    )
    result = await _turn(db, settings, model, "add it", identity=staff)
    assert "no photo with attachment_id 'nope'" in result.tool_calls[0].result["error"]
