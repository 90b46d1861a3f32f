import base64
import json

import httpx
import pytest

from app.web import create_app
from tests.app.images import jpeg
from tests.fakes import ScriptedModel, call, say


def _client(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
def make_client(db, settings):
    """A client of the app with the demo sign-in on (these tests pick roles with it)."""
    def make(*steps, demo_signin=True, **kw):
        model = ScriptedModel(*steps, **kw)
        app = create_app(settings.model_copy(update={"demo_signin": demo_signin}), db=db,
                         model=model)
        return _client(app), model
    return make


async def test_chat_end_to_end_records_the_turn(make_client, db):
    client, model = make_client(call("search_catalog", query="acrylic"),
                                say("Use the [Trotec Speedy 400](/tools/trotec-speedy-400)."))
    async with client:
        r = await client.post("/api/chat", json={"message": "I need to cut 3mm acrylic"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert "Trotec Speedy 400" in body["answer"]
    assert body["tool_calls"][0]["name"] == "search_catalog"
    turn = await db.fetchone("SELECT * FROM turns")
    assert turn["answer"] == body["answer"]
    assert turn["tool_calls"][0]["name"] == "search_catalog"
    conv = await db.fetchone("SELECT user_ref FROM conversations")
    assert conv["user_ref"].startswith("u_")


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


async def test_stream_sends_tool_calls_then_the_turn(make_client):
    client, _ = make_client(call("get_unit_status", slug="form-4"), say("One is free."))
    async with client:
        r = await client.post("/api/chat", json={"message": "free?", "stream": True})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert [e["type"] for e in events] == ["tool_call", "turn"]
    assert events[1]["answer"] == "One is free."


async def test_role_decides_tools_on_the_server_and_cards_confirm(make_client, db):
    ticket = await db.fetchone("SELECT id FROM tickets ORDER BY id LIMIT 1")
    client, model = make_client(
        call("update_ticket", ticket_id=ticket["id"], status="resolved"), say("Confirm the card."))
    async with client:
        assert (await client.post("/api/session", json={"role": "staff"})).status_code == 200
        body = (await client.post("/api/chat", json={"message": "resolve it",
                                                     "page": {"path": "/staff/tickets"}})).json()
        card = body["cards"][0]
        assert (await db.fetchone("SELECT status FROM tickets WHERE id=%s",
                                  (ticket["id"],)))["status"] == "open"
        confirmed = await client.post(f"/api/proposals/{card['proposal_id']}/confirm")
        again = await client.post(f"/api/proposals/{card['proposal_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["status"] == "applied"
    assert again.status_code == 409
    assert (await db.fetchone("SELECT status FROM tickets WHERE id=%s",
                              (ticket["id"],)))["status"] == "resolved"
    assert "update_ticket" in [t["function"]["name"] for t in model.requests[0]["tools"]]


async def test_a_student_gets_no_staff_tools_and_cannot_confirm(make_client, db):
    client, model = make_client(say("I can't see the queue."))
    async with client:
        await client.post("/api/session", json={"role": "student"})
        await client.post("/api/chat", json={"message": "show me the queue"})
        r = await client.post("/api/proposals/8d6f1a2e-0000-4000-8000-000000000000/confirm")
    names = {t["function"]["name"] for t in model.requests[0]["tools"]}
    assert not names & {"list_open_tickets", "update_ticket", "identify_tools"}
    assert r.status_code == 404


async def test_a_card_cannot_be_confirmed_by_someone_else(make_client, db):
    ticket = await db.fetchone("SELECT id FROM tickets ORDER BY id LIMIT 1")
    staff, _ = make_client(call("update_ticket", ticket_id=ticket["id"], note="x"), say("ok"))
    async with staff:
        await staff.post("/api/session", json={"role": "staff"})
        card = (await staff.post("/api/chat", json={"message": "note"})).json()["cards"][0]
    stranger, _ = make_client(say("x"))
    async with stranger:
        await stranger.post("/api/session", json={"role": "student"})
        r = await stranger.post(f"/api/proposals/{card['proposal_id']}/confirm")
    # answered like an id that does not exist: someone else's ids cannot be probed
    assert r.status_code == 404 and "no proposal" in r.json()["error"]


async def test_openai_compatible_endpoint(make_client):
    client, model = make_client(say("The lab has a Form 4."), say("again"))
    async with client:
        r = await client.post("/v1/chat/completions", json={
            "model": "makerlab-assistant",
            "messages": [{"role": "system", "content": "You are a pirate."},
                         {"role": "user", "content": "hello"},
                         {"role": "assistant", "content": "hi"},
                         {"role": "user", "content": "Which resin printer is there?"}],
        })
        s = await client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "again"}], "stream": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == "The lab has a Form 4."
    assert body["usage"]["total_tokens"] == 15
    sent = model.requests[0]["messages"]
    assert "pirate" not in json.dumps(sent)  # the caller's system message is not obeyed
    assert [m["content"] for m in sent[2:]] == ["hello", "hi", "Which resin printer is there?"]
    assert s.text.rstrip().endswith("data: [DONE]")


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


async def test_pages_render(make_client):
    client, _ = make_client()
    async with client:
        home = await client.get("/")
        tool = await client.get("/tools/form-4")
        missing = await client.get("/tools/glowforge")
    assert home.status_code == 200 and 'href="/tools/form-4"' in home.text
    assert tool.status_code == 200 and 'data-page="/tools/form-4"' in tool.text
    assert "not recorded" in tool.text
    assert missing.status_code == 404


BIG = base64.b64encode(b"\xff" * (9 * 1024 * 1024)).decode()


@pytest.mark.parametrize(
    ("path", "payload", "status", "message"),
    [
        ("/api/chat", b"{not json", 400, "body is not valid JSON"),
        ("/api/chat", {"text": "hi"}, 400, "message: Field required"),
        ("/api/chat", {"message": ""}, 400, "message: the message has no text"),
        ("/api/chat", {"message": "hi", "page": {"path": "/tools/glowforge"}}, 400,
         "no machine with slug 'glowforge'"),
        ("/api/chat", {"message": "hi", "photos": [{"name": "a.jpg", "data": BIG}]}, 413,
         "photo 'a.jpg' is larger than"),
        ("/api/chat", {"message": "hi", "photos": [
            {"name": "notes.pdf", "data": base64.b64encode(b"%PDF-1.4 hello").decode()}]}, 415,
         "photo 'notes.pdf' is not an image"),
        ("/api/chat", {"message": "hi", "photos": [{"name": "x", "data": "@@@"}]}, 400,
         "not valid base64"),
        ("/api/chat", {"message": "hi", "conversation_id": "nope"}, 404, "no conversation"),
        ("/api/session", {"role": "wizard"}, 400, "unknown role 'wizard'"),
        ("/v1/chat/completions", {"messages": []}, 400, "messages: List should have at least"),
        ("/v1/chat/completions", {"messages": [{"role": "assistant", "content": "x"}]}, 400,
         "must end with a user message"),
        ("/api/proposals/not-a-uuid/confirm", {}, 404, "no proposal"),
        ("/api/proposals/x/explode", {}, 404, "unknown decision"),
    ],
)
async def test_bad_input_is_a_clear_4xx_and_writes_nothing(make_client, db, path, payload,
                                                           status, message):
    client, model = make_client(say("never sent"))
    before = await db.table_counts()
    async with client:
        if isinstance(payload, bytes):
            r = await client.post(path, content=payload,
                                  headers={"content-type": "application/json"})
        else:
            r = await client.post(path, json=payload)
    assert r.status_code == status, r.text
    assert message in json.dumps(r.json())
    assert await db.table_counts() == before
    assert model.requests == []


async def test_a_failed_model_call_is_a_502_and_keeps_no_photo(make_client, db):
    from app.chat.models import ModelCallError

    client, _ = make_client(ModelCallError("provider down"))
    data = base64.b64encode(jpeg()).decode()
    async with client:
        r = await client.post("/api/chat", json={
            "message": "hi", "photos": [{"name": "IMG.jpg", "data": data}]})
    assert r.status_code == 502 and "provider down" not in r.json()["error"]
    assert r.headers["x-request-id"] in r.json()["error"]
    assert (await db.fetchone("SELECT count(*) AS n FROM attachments"))["n"] == 0
    assert (await db.fetchone("SELECT count(*) AS n FROM turns"))["n"] == 0


async def test_consent_is_off_until_the_person_says_yes(make_client, db):
    client, _ = make_client(say("hello"))
    async with client:
        before = (await client.get("/api/consent")).json()
        await client.post("/api/chat", json={"message": "hi", "page": {"path": "/tools/form-4"}})
        yes = await client.post("/api/consent", json={"consent": True})
        bad = await client.post("/api/consent", json={"consent": "maybe"})
        after = (await client.get("/api/consent")).json()
        no = (await client.post("/api/consent", json={"consent": False})).json()
    row = await db.fetchone("SELECT c.user_ref, r.consent FROM conversations c"
                            " JOIN research_consent r USING (user_ref)")
    turn = await db.fetchone("SELECT page_path, audience FROM turns")
    assert before == {"consent": False} and yes.json() == {"consent": True}
    assert bad.status_code == 400 and after == {"consent": True} and no == {"consent": False}
    assert row["user_ref"].startswith("u_") and row["consent"] is False  # the same person
    assert turn == {"page_path": "/tools/form-4", "audience": "anonymous"}
