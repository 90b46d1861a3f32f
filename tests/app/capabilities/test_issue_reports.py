"""Problem reports: anonymous reports are filed."""

from tests.app.one_turn import one_turn
from tests.fakes import ScriptedModel, call, say


async def test_anonymous_report_is_filed_without_a_name(db, settings):
    model = ScriptedModel(
        call("report_issue", slug="form-4", title="Resin leaking", description="under the tank"),
        say("Filed."),
    )
    result = await one_turn(db, settings, model,
                            "The Form 4 is leaking; I'd rather not say my name")
    assert result.tool_calls[0].result["anonymous"] is True
    row = await db.fetchone("SELECT reporter_id, reporter_name FROM tickets WHERE title = %s",
                            ("Resin leaking",))
    assert row == {"reporter_id": None, "reporter_name": None}
