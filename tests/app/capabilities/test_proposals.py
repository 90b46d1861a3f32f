"""Action tools only propose: nothing changes until a person confirms the card."""

from app.identity import demo_identity
from tests.app.one_turn import one_turn
from tests.fakes import ScriptedModel, call, say


async def test_action_tool_only_proposes(db, settings):
    staff = await demo_identity(db, "staff")
    ticket = await db.fetchone("SELECT id FROM tickets WHERE status = 'open' ORDER BY id LIMIT 1")
    model = ScriptedModel(
        call("update_ticket", ticket_id=ticket["id"], status="resolved", note="refocused"),
        say("Press Confirm on the card to apply it."),
    )
    result = await one_turn(db, settings, model, "Resolve the laser ticket", identity=staff)
    card = result.proposals[0]
    assert card["proposed"] is True and card["tool"] == "update_ticket"
    assert "open → resolved" in card["summary"]
    row = await db.fetchone("SELECT status FROM tickets WHERE id = %s", (ticket["id"],))
    assert row["status"] == "open"
    assert (await db.fetchone("SELECT count(*) AS n FROM ticket_notes"))["n"] == 0
