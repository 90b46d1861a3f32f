"""Photo intake: only a photo of this message can be recorded."""

from app.identity import demo_identity
from tests.app.one_turn import one_turn
from tests.fakes import ScriptedModel, call, say


async def test_identify_tools_refuses_a_photo_not_in_the_message(db, settings):
    staff = await demo_identity(db, "staff")
    model = ScriptedModel(
        call("identify_tools", attachment_id="nope", items=[{"name": "drill press"}]), say("ok")
    )
    result = await one_turn(db, settings, model, "add it", identity=staff)
    assert "no photo with attachment_id 'nope'" in result.tool_calls[0].result["error"]
