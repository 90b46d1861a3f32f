"""/api routes: the demo sign-in, chat (JSON or streamed), confirmation cards and consent."""

import asyncio
import json
import logging
import time

import pytest

from tests.app.web.payloads import LEAK, png
from tests.fakes import call, say


async def test_the_demo_sign_in_is_off_unless_demo_signin(make):
    client, _ = make()
    async with client:
        r = await client.post("/api/session", json={"role": "super_admin"})
        me = (await client.get("/api/me")).json()
    assert r.status_code == 404 and "demo sign-in is off" in r.json()["error"]
    assert me["signed_in"] is None and me["demo_signin"] is False


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


@pytest.mark.parametrize("stream", [False, True])
async def test_a_tool_call_holding_a_lone_surrogate_is_refused_and_the_turn_answers(
        make_client, db, stream):
    client, _ = make_client(call("search_catalog", query="acrylic\ud800"), say("Try again?"))
    async with client:
        r = await client.post("/api/chat", json={"message": "cut acrylic?", "stream": stream})
    assert r.status_code == 200, r.text
    turn = json.loads(r.text.splitlines()[-1]) if stream else r.json()
    assert turn["answer"] == "Try again?"
    assert turn["tool_calls"][0]["arguments"] == {"query": "acrylic"}
    assert "lone surrogate U+D800" in json.dumps(turn["tool_calls"][0]["result"])
    stored = await db.fetchone("SELECT tool_calls FROM turns")
    assert stored["tool_calls"][0]["arguments"] == {"query": "acrylic"}


async def test_stream_sends_tool_calls_then_the_turn(make_client):
    client, _ = make_client(call("get_unit_status", slug="form-4"), say("One is free."))
    async with client:
        r = await client.post("/api/chat", json={"message": "free?", "stream": True})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert [e["type"] for e in events] == ["tool_call", "turn"]
    assert events[1]["answer"] == "One is free."


async def test_a_large_photo_does_not_stall_the_server(make):
    """QR decoding of a photo just under the pixel limit runs off the event loop: the server
    answers other requests all through it. The gaps between answers are measured against the
    chat's own length, not a fixed time, so a busy machine slows both alike: with the decoding
    on the loop, one gap lasts as long as the decoding."""
    client, _ = make()
    photo = png(7000, 7000)
    answered: list[float] = []
    async with client:
        async def ask():
            return await client.post("/api/chat", json={
                "message": "what is this?", "photos": [{"name": "a.png", "data": photo}] * 2})

        async def ping(chat):
            while not chat.done():
                assert (await client.get("/healthz")).status_code == 200
                answered.append(time.monotonic())
                await asyncio.sleep(0.01)

        started = time.monotonic()
        chat = asyncio.create_task(ask())
        await ping(chat)
        r = await chat
        took = time.monotonic() - started
    assert r.status_code == 200, r.text
    gaps = [b - a for a, b in zip([started, *answered], answered, strict=False)]
    assert len(gaps) >= 5 and max(gaps) < took / 4, (len(gaps), max(gaps), took)


async def test_an_unexpected_error_mid_stream_ends_the_stream_with_an_error_event(
        make, caplog, monkeypatch):
    client, _ = make(RuntimeError(f"token={LEAK}"))
    monkeypatch.setenv("SOME_API_KEY", LEAK)
    caplog.set_level(logging.ERROR, "app.web")
    async with client:
        r = await client.post("/api/chat", json={"message": "hi", "stream": True})
    events = [json.loads(line) for line in r.text.splitlines()]
    assert events[-1]["type"] == "error" and events[-1]["status"] == 500
    assert r.headers["x-request-id"] in events[-1]["error"] and LEAK not in r.text
    assert LEAK not in caplog.text


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
