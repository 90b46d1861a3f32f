"""The stand-ins for write, action and live-read tools: the same name, description and schema,
and nothing written or fetched."""

from app.chat.compose import compose_chat
from app.chat.page_context import load_page_context
from app.identity import demo_identity
from evals.execute.compose import compose_case
from evals.execute.runner import run_suite
from evals.load.cases import load_cases
from tests.evals.helpers import select
from tests.fakes import ScriptedModel, call, say


def case(case_id):
    return select(load_cases(), case_id)[0]


async def test_stubs_keep_name_description_and_schema(env):
    composed = await compose_case(env, case("staff-resolve-proposes-card"))
    route = await compose_chat(env.db, identity=await demo_identity(env.db, "staff"),
                               page=await load_page_context(env.db, "/"), manuals=env.library)
    assert composed.composed.tool_schemas() == route.tool_schemas()
    runs = {t.name: t.run for t in composed.composed.tools}
    originals = {t.name: t.run for t in route.tools}
    kinds = {t.kind for t in composed.composed.tools}
    assert {"read", "write", "action"} <= kinds  # each kind is there to be looked at
    for t in composed.composed.tools:
        assert (runs[t.name] is originals[t.name]) == (t.kind == "read"), t.name


async def test_a_run_writes_nothing_and_reads_the_real_queue(env):
    ticket = await env.db.fetchone("SELECT id FROM tickets WHERE title = 'Resin tank film"
                                   " clouded'")
    before = await env.db.table_counts()
    model = ScriptedModel(
        call("list_open_tickets"),
        call("update_ticket", ticket_id=ticket["id"], status="resolved"),
        call("report_issue", slug="form-4", title="Noise", description="grinding"),
        call("report_correction", slug="form-4", field="other", claim="wrong"),
        call("read_page", url="http://127.0.0.1:1/"),
        say("Press Confirm on the card."),
    )
    [result] = await run_suite(env, select(load_cases(), "staff-resolve-proposes-card"), model)
    calls = result.attempts[0].tool_calls
    assert [c.name for c in calls] == ["list_open_tickets", "update_ticket", "report_issue",
                                       "report_correction", "read_page"]
    titles = [t["title"] for t in calls[0].result_map["tickets"]]
    assert titles == ["Cuts not going through 3 mm plywood", "Resin tank film clouded"]
    assert calls[1].result_map["proposed"] is True
    assert await env.db.table_counts() == before
    assert result.status == "PASS"
