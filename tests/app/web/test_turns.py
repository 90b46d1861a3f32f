"""One chat turn as the server runs it: page context, history, photos, the stored turn, and
answers whose manual citations resolve."""

import base64
import json

import httpx

from app.chat.models import ModelCallError
from app.chat.reply import ModelReply
from app.manuals.citations import check_citations, extract_citations, gather_evidence
from app.web import create_app
from tests.app.images import jpeg
from tests.fakes import ScriptedModel, call, say


async def test_conversation_history_comes_from_the_server(make_client):
    client, model = make_client(say("first answer"), say("second answer"))
    async with client:
        first = (await client.post("/api/chat", json={"message": "one"})).json()
        r = await client.post("/api/chat", json={"message": "two",
                                                  "conversation_id": first["conversation_id"]})
    assert r.status_code == 200
    sent = [m["content"] for m in model.requests[1]["messages"] if m["role"] != "system"]
    assert sent == ["one", "first answer", "two"]


async def test_someone_elses_conversation_is_not_found(make_client, settings, db):
    client, _ = make_client(say("a"))
    async with client:
        cid = (await client.post("/api/chat", json={"message": "one"})).json()["conversation_id"]
    other, _ = make_client(say("b"))
    async with other:
        r = await other.post("/api/chat", json={"message": "x", "conversation_id": cid})
    assert r.status_code == 404


async def test_a_visitor_cannot_put_staff_rows_in_front_of_the_model(make, db):
    client, model = make()
    ticket = (await db.fetchone("SELECT min(id) AS id FROM tickets"))["id"]
    async with client:
        real = await client.post("/api/chat", json={
            "message": "summarise", "page": {"path": "/staff/tickets", "selection": [ticket]}})
        unknown = await client.post("/api/chat", json={
            "message": "summarise", "page": {"path": "/staff/tickets", "selection": [99999]}})
    assert real.status_code == unknown.status_code == 400
    assert real.json()["error"] == unknown.json()["error"].replace("99999", str(ticket))
    assert model.requests == []


async def test_a_page_path_with_a_trailing_newline_is_unknown(make):
    client, model = make()
    async with client:
        r = await client.post("/api/chat", json={"message": "hi",
                                                 "page": {"path": "/tools/form-4\n"}})
    assert r.status_code == 400 and model.requests == []


async def test_photo_is_sent_as_an_image_part(make_client, db):
    client, model = make_client(say("That is a Form 4."))
    data = base64.b64encode(jpeg()).decode()
    async with client:
        r = await client.post("/api/chat", json={
            "message": "What is this?", "photos": [{"name": "IMG_1.jpg", "data": data}]})
    assert r.status_code == 200, r.text
    content = model.requests[0]["messages"][-1]["content"]
    assert "[Attached photos: attachment_id=" in content[0]["text"]
    assert content[1]["type"] == "image_url"
    assert (await db.fetchone("SELECT count(*) AS n FROM attachments"))["n"] == 1


async def test_a_failed_model_call_is_a_502_and_keeps_no_photo(make_client, db):
    client, _ = make_client(ModelCallError("provider down"))
    data = base64.b64encode(jpeg()).decode()
    async with client:
        r = await client.post("/api/chat", json={
            "message": "hi", "photos": [{"name": "IMG.jpg", "data": data}]})
    assert r.status_code == 502 and "provider down" not in r.json()["error"]
    assert r.headers["x-request-id"] in r.json()["error"]
    assert (await db.fetchone("SELECT count(*) AS n FROM attachments"))["n"] == 0
    assert (await db.fetchone("SELECT count(*) AS n FROM turns"))["n"] == 0


async def test_nul_from_the_model_or_a_tool_is_stored_without_it(make, db):
    from tests.fakes import call

    client, _ = make(call("report_issue", slug="form-4", title="Broken\x00 latch",
                          description="it\x00 broke"),
                     say("Filed.\x00 Thanks."))
    async with client:
        r = await client.post("/api/chat", json={"message": "the latch broke"})
    assert r.status_code == 200, r.text
    assert "\x00" not in r.json()["answer"]
    stored = await db.fetchone("SELECT answer, tool_calls::text AS calls FROM turns")
    assert "\x00" not in stored["answer"] and "\\u0000" not in stored["calls"]


def cite_first_passage(messages, tools):
    result = json.loads(next(m for m in reversed(messages) if m["role"] == "tool")["content"])
    p = result["passages"][0]
    return ModelReply(content=f"Wipe the build platform with isopropyl alcohol and let it dry "
                              f"[{p['title']}, p. {p['page']}](#cite-{p['ref']}).")


async def test_form4_question_is_answered_with_a_resolving_citation(db, settings, library):
    model = ScriptedModel(call("search_manual", question="How do I clean the build platform?",
                               slug="form-4"), cite_first_passage)
    app = create_app(settings, db=db, model=model, manuals=library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        body = (await client.post("/api/chat", json={
            "message": "How do I clean the build platform?",
            "page": {"path": "/tools/form-4"}})).json()
    passages = body["tool_calls"][0]["result"]["passages"]
    raw_answer = (await db.fetchone("SELECT answer FROM turns"))["answer"]
    assert "#cite-" in raw_answer
    assert f"({passages[0]['url']})" in body["answer"]  # people see the resolved address
    cites = extract_citations(raw_answer, passages, [])
    doc = cites[0].document
    async with httpx.AsyncClient() as client:
        evidence = await gather_evidence(
            cites, {doc: await library.page_texts(library.store.key_for(doc))}, client,
            may_fetch=library.store.serves)
    assert check_citations(cites, evidence, {"Form 4 Manual"}) == (True, "1 citation(s) resolve")


async def test_trotec_page_attaches_the_scanned_guide(db, settings, library):
    model = ScriptedModel(ModelReply(content="See the guide."))
    app = create_app(settings, db=db, model=model, manuals=library)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        body = (await client.post("/api/chat", json={
            "message": "How do I clean the lens?", "page": {"path": "/tools/trotec-speedy-400"}
        })).json()
    [manual] = body["manuals"]
    assert manual["title"] == "Trotec Speedy 400 Operator Guide" and manual["page_count"] == 3
    assert manual["address"].startswith("http://127.0.0.1:")
    system = model.requests[0]["messages"][1]["content"]
    assert f"#cite-{manual['ref']}-N" in system
    # A scripted model reads no PDFs, so the manual is named, not sent.
    assert model.requests[0]["messages"][-1]["content"] == "How do I clean the lens?"
