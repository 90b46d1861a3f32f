import httpx

from app.chat.compose import compose_chat
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.identity import demo_identity
from app.web import create_app
from evals.execute.compose import compose_case
from evals.execute.runner import run_suite
from evals.load.cases import load_cases
from tests.evals.helpers import select
from tests.fakes import ScriptedModel, say


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


async def test_photos_carry_the_hint_and_qr_hints_are_recorded(env):
    model = ScriptedModel(say("That is the Form 4."))
    [result] = await run_suite(env, select(load_cases(), "photo-qr-label"), model, vision=True)
    sent = model.requests[0]["messages"][-1]["content"]
    assert "[Attached photos: attachment_id=" in sent[0]["text"] and "IMG_2101.jpg" in sent[0][
        "text"]
    assert sent[1]["type"] == "image_url"
    assert result.attempts[0].transcript.qr_hints == ["https://makerlab.example/tools/form-4"]
    assert "→ catalogue machine Form 4 (form-4)" in model.requests[0]["messages"][1]["content"]
    assert result.status == "PASS"


async def test_a_context_is_composed_once_a_phase_and_each_case_gets_its_own_copy(env):
    c = case("staff-selected-ticket")
    first, second = await compose_case(env, c), await compose_case(env, c)
    assert len(env.composed) == 1
    assert first.composed.system_messages() == second.composed.system_messages()
    first.composed.system_prompt = "changed by one case"
    first.composed.qr_hints.append("one case's hint")
    third = await compose_case(env, c)
    assert third.composed.system_prompt != "changed by one case" and not third.composed.qr_hints
    await env.use_catalog("lab")  # the look-alikes change the catalogue: compose again
    assert env.composed == {}
    lab = await compose_case(env, c)
    assert "Ultimaker 3 Extended" in lab.composed.system_prompt
    assert "Ultimaker 3 Extended" not in first.composed.system_messages()[0]["content"]


async def test_cases_waiting_together_share_one_composition(env, monkeypatch):
    import asyncio

    import evals.execute.compose as compose

    calls = []
    real = compose._compose_context

    async def counted(env, case):
        calls.append(case.id)
        await asyncio.sleep(0.01)  # every case is waiting before it finishes
        return await real(env, case)

    monkeypatch.setattr(compose, "_compose_context", counted)
    c = case("staff-selected-ticket")
    composed = await asyncio.gather(*(compose_case(env, c) for _ in range(20)))
    assert len(calls) == 1
    assert composed[0].composed.tools is not composed[1].composed.tools  # each its own list


QR_CASE = """\
- id: qr
  prompt: "Which machine is this?"
  photos: [IMG_2101.jpg]
  qr_codes:
    IMG_2101.jpg: {codes}
  assert:
    - kind: no_unknown_tools
"""


async def test_a_cases_qr_codes_are_read_instead_of_its_photos(env, tmp_path, monkeypatch):
    import app.chat.qr as qr

    def no_decoding(data):
        raise AssertionError("the photo was decoded")

    (tmp_path / "a.yaml").write_text(QR_CASE.format(
        codes="[https://makerlab.example/tools/trotec-speedy-400]"))
    (tmp_path / "b.yaml").write_text(QR_CASE.replace("id: qr", "id: no-qr").format(codes="[]"))
    cases = {c.id: c for c in load_cases(tmp_path)}
    monkeypatch.setattr(qr, "decode_qr", no_decoding)
    model = ScriptedModel(say("The Trotec Speedy 400."), say("I can't tell."))
    [first] = await run_suite(env, [cases["qr"]], model, vision=True)
    told = model.requests[0]["messages"][1]["content"]
    assert "“https://makerlab.example/tools/trotec-speedy-400” → catalogue machine Trotec" \
        " Speedy 400 (trotec-speedy-400)" in told
    assert first.attempts[0].transcript.qr_hints == [
        "https://makerlab.example/tools/trotec-speedy-400"]
    # the same photo with no codes is composed on its own, and the reader finds none
    [second] = await run_suite(env, [cases["no-qr"]], model, vision=True)
    assert "QR codes" not in model.requests[1]["messages"][1]["content"]
    assert second.attempts[0].transcript.qr_hints == []
