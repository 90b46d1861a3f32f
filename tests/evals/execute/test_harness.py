import httpx

from app.chat.compose import compose_chat
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.identity import demo_identity
from app.web import create_app
from evals.execute.harness import compose_case
from evals.execute.runner import run_suite
from evals.load.cases import load_cases, select
from tests.fakes import ScriptedModel, call, say


def case(case_id):
    return select(load_cases(), case_id)[0]


async def test_eval_composes_what_the_chat_route_composes(env):
    c = case("staff-selected-ticket")
    composed = await compose_case(env, c)
    staff = await demo_identity(env.db, "staff")
    ids = await selection_ids_by_name(env.db, "/staff/tickets", ["Resin tank film clouded"])
    page = await load_page_context(env.db, "/staff/tickets", ids, role="staff")
    route = await compose_chat(env.db, identity=staff, page=page, manuals=env.library)
    assert composed.composed.system_messages() == route.system_messages()
    assert composed.composed.tool_names == route.tool_names
    # and the real route sends the same prompt to the model
    model = ScriptedModel(say("ok"))
    app = create_app(env.settings.model_copy(update={"demo_signin": True,
                                                     "allowed_hosts": ["test"]}), db=env.db,
                     model=model, manuals=env.library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        await client.post("/api/session", json={"role": "staff"})
        await client.post("/api/chat", json={"message": c.prompt, "page": {
            "path": "/staff/tickets", "selection": ids}})
    assert model.requests[0]["messages"][:2] == composed.composed.system_messages()
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == route.tool_names


async def test_stubs_keep_name_description_and_schema(env):
    composed = await compose_case(env, case("staff-resolve-proposes-card"))
    route = await compose_chat(env.db, identity=await demo_identity(env.db, "staff"),
                               page=await load_page_context(env.db, "/"), manuals=env.library)
    assert composed.composed.tool_schemas() == route.tool_schemas()
    runs = {t.name: t.run for t in composed.composed.tools}
    originals = {t.name: t.run for t in route.tools}
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
    assert [c["name"] for c in calls] == ["list_open_tickets", "update_ticket", "report_issue",
                                          "report_correction", "read_page"]
    titles = [t["title"] for t in calls[0]["result"]["tickets"]]
    assert titles == ["Cuts not going through 3 mm plywood", "Resin tank film clouded"]
    assert calls[1]["result"]["proposed"] is True
    assert await env.db.table_counts() == before
    assert result.status == "PASS"


async def test_photos_carry_the_hint_and_qr_hints_are_recorded(env):
    model = ScriptedModel(say("That is the Form 4."))
    [result] = await run_suite(env, select(load_cases(), "photo-qr-label"), model, vision=True)
    sent = model.requests[0]["messages"][-1]["content"]
    assert "[Attached photos: attachment_id=" in sent[0]["text"] and "IMG_2101.jpg" in sent[0][
        "text"]
    assert sent[1]["type"] == "image_url"
    assert result.attempts[0].qr_hints == ["https://makerlab.example/tools/form-4"]
    assert "→ catalogue machine Form 4 (form-4)" in model.requests[0]["messages"][1]["content"]
    assert result.status == "PASS"


async def test_lab_cases_run_after_the_rest_against_the_look_alikes(env):
    order = []

    def answer(messages, tools):
        system = messages[0]["content"]  # the catalogue is in the stable prompt
        lab = "Ultimaker 3 Extended" in system
        order.append(lab)
        if not lab:
            return say("Sorry, the lab does not have a Glowforge.")
        return say("It could be the Ultimaker 3 or the Ultimaker 3 Extended — which is it?")

    cases = select(load_cases(), "photo-ambiguous-ultimaker,no-glowforge")
    model = ScriptedModel(answer, repeat=True)
    results = await run_suite(env, cases, model, vision=True)
    assert order == [False, True]  # demo case first, without the look-alikes
    assert [r.id for r in results] == ["no-glowforge", "photo-ambiguous-ultimaker"]
    assert [r.status for r in results] == ["PASS", "PASS"]


async def test_a_context_is_composed_once_a_phase_and_each_case_gets_its_own_copy(env):
    c = case("staff-selected-ticket")
    first, second = await compose_case(env, c), await compose_case(env, c)
    assert len(env.composed) == 1
    assert first.composed.system_messages() == second.composed.system_messages()
    first.composed.system_prompt = "changed by one case"
    first.composed.qr_hints.append("one case's hint")
    third = await compose_case(env, c)
    assert third.composed.system_prompt != "changed by one case" and not third.composed.qr_hints
    await env.use_lab()  # the look-alikes change the catalogue: compose again
    assert env.composed == {}
    lab = await compose_case(env, c)
    assert "Ultimaker 3 Extended" in lab.composed.system_prompt
    assert "Ultimaker 3 Extended" not in first.composed.system_messages()[0]["content"]


async def test_cases_waiting_together_share_one_composition(env, monkeypatch):
    import asyncio

    import evals.execute.harness as harness

    calls = []
    real = harness._compose_context

    async def counted(env, case):
        calls.append(case.id)
        await asyncio.sleep(0.01)  # every case is waiting before it finishes
        return await real(env, case)

    monkeypatch.setattr(harness, "_compose_context", counted)
    c = case("staff-selected-ticket")
    composed = await asyncio.gather(*(compose_case(env, c) for _ in range(20)))
    assert len(calls) == 1
    assert composed[0].composed.tools is not composed[1].composed.tools  # each its own list
