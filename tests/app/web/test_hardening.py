"""The holes an attacker's probe found, each closed: sign-in, bounded work, no leaks, CSRF,
headers, staff-only selections."""

import asyncio
import base64
import io
import json
import logging
import os
import time

import httpx
import pytest
from PIL import Image
from starlette.requests import Request

from app.chat.models import ModelCallError
from app.settings import Settings
from app.web import create_app
from app.web.errors import ClientError
from app.web.requests import read_body
from tests.app.images import jpeg
from tests.fake_oidc import CLIENT_ID, CLIENT_SECRET, fake_oidc_provider
from tests.fakes import ScriptedModel, say

LEAK = "sk-live-0123456789abcdef"


def client_of(app) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
def make(db, settings):
    def make(*steps, **overrides):
        model = ScriptedModel(*steps) if steps else ScriptedModel(say("ok"), repeat=True)
        app = create_app(Settings(**{**settings.model_dump(), **overrides}), db=db, model=model)
        return client_of(app), model
    return make


def png(width, height) -> str:
    out = io.BytesIO()
    Image.new("L", (width, height)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


# --- sign-in ----------------------------------------------------------------------------


async def test_the_demo_sign_in_is_off_unless_demo_signin(make):
    client, _ = make()
    async with client:
        r = await client.post("/api/session", json={"role": "super_admin"})
        me = (await client.get("/api/me")).json()
    assert r.status_code == 404 and "demo sign-in is off" in r.json()["error"]
    assert me["signed_in"] is None and me["demo_signin"] is False


async def sign_in(client, provider, user) -> httpx.Response:
    provider.user = user
    start = await client.get("/auth/login")
    assert start.status_code in (302, 307), start.text
    async with httpx.AsyncClient() as browser:  # the provider's own pages
        back = await browser.get(start.headers["location"])
    return await client.get(back.headers["location"])


async def test_oidc_sign_in_takes_the_role_from_the_staff_list(make, db, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff:\n  - Sam.Maker@Uni.example\nsuper_admin: []\n")
    with fake_oidc_provider() as provider:
        settings = dict(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                        oidc_client_secret=CLIENT_SECRET, staff_list=staff_list)
        staff_client, _ = make(**settings)
        student_client, _ = make(**settings)
        async with staff_client, student_client:
            assert (await staff_client.get("/api/me")).json()["sign_in"] == "/auth/login"
            done = await sign_in(staff_client, provider, {
                "sub": "u1", "email": "sam.maker@uni.example", "email_verified": True,
                "name": "Sam Maker"})
            assert done.status_code == 303
            await sign_in(student_client, provider, {
                "sub": "u2", "email": "kim@uni.example", "email_verified": True,
                "name": "Kim"})
            staff = (await staff_client.get("/api/me")).json()["signed_in"]
            student = (await student_client.get("/api/me")).json()["signed_in"]
            # a second sign-in of the same account is the same person, with today's role
            staff_list.write_text("staff: []\n")
            again, _ = make(**settings)
            async with again:
                await sign_in(again, provider, {"sub": "u1", "email": "sam.maker@uni.example",
                                                "email_verified": True, "name": "Sam Maker"})
                demoted = (await again.get("/api/me")).json()["signed_in"]
    assert staff == {"name": "Sam Maker", "role": "staff", "title": ""}
    assert student["role"] == "student"
    assert demoted["role"] == "student"
    rows = await db.fetch("SELECT email FROM people WHERE oidc_subject IS NOT NULL ORDER BY id")
    assert [r["email"] for r in rows] == ["sam.maker@uni.example", "kim@uni.example"]


async def test_a_forged_or_replayed_callback_signs_nobody_in(make):
    with fake_oidc_provider() as provider:
        client, _ = make(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                         oidc_client_secret=CLIENT_SECRET)
        async with client:
            forged = await client.get("/auth/callback?code=made-up&state=made-up")
            me = (await client.get("/api/me")).json()
    assert forged.status_code == 400 and me["signed_in"] is None
    assert "sign-in failed" in forged.json()["error"]


async def test_an_unverified_email_is_refused(make):
    with fake_oidc_provider() as provider:
        client, _ = make(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                         oidc_client_secret=CLIENT_SECRET)
        async with client:
            r = await sign_in(client, provider, {"sub": "u9", "email": "x@uni.example",
                                                 "email_verified": False})
            me = (await client.get("/api/me")).json()
    assert r.status_code == 403 and me["signed_in"] is None


async def test_sign_in_is_a_clear_404_when_not_configured(make):
    client, _ = make()
    async with client:
        r = await client.get("/auth/login")
    assert r.status_code == 404 and "OIDC_ISSUER" in r.json()["error"]


@pytest.mark.parametrize(("text", "message"), [
    ("[]", "expected a mapping"),
    ("wizard: [a@b.c]", "unknown role 'wizard'"),
    ("staff: not-a-list", "staff must be a list of e-mail addresses"),
    ("staff: [: bad", "cannot read the staff list"),
])
def test_a_bad_staff_list_is_named(tmp_path, text, message):
    from app.web.auth import StaffListError, load_staff_list

    path = tmp_path / "staff.yaml"
    path.write_text(text)
    with pytest.raises(StaffListError, match=message) as err:
        load_staff_list(path)
    assert str(path) in str(err.value)


# --- bounded work ------------------------------------------------------------------------


async def test_huge_images_are_refused_from_their_header(make, db):
    client, model = make()
    big = png(9000, 9000)  # 81 megapixels in ~100 KB
    async with client:
        started = time.monotonic()
        r = await client.post("/api/chat", json={
            "message": "what is this?", "photos": [{"name": f"{n}.png", "data": big}
                                                   for n in range(6)]})
        took = time.monotonic() - started
    assert r.status_code == 413 and "9000 × 9000 pixels" in r.json()["error"]
    assert took < 2 and model.requests == []


async def test_a_large_photo_does_not_stall_the_server(make):
    """QR decoding of a photo just under the pixel limit runs off the event loop."""
    client, _ = make()
    photo = png(7000, 7000)
    waits: list[float] = []
    async with client:
        async def ask():
            return await client.post("/api/chat", json={
                "message": "what is this?", "photos": [{"name": "a.png", "data": photo}] * 2})

        async def ping(chat):
            while not chat.done():
                t = time.monotonic()
                assert (await client.get("/healthz")).status_code == 200
                waits.append(time.monotonic() - t)
                await asyncio.sleep(0.01)

        chat = asyncio.create_task(ask())
        await ping(chat)
        r = await chat
    assert r.status_code == 200, r.text
    assert waits and max(waits) < 0.2, max(waits)


@pytest.mark.parametrize("route", ["/api/chat", "/v1/chat/completions"])
@pytest.mark.parametrize(("make_body", "status", "message"), [
    (lambda s: "x" * (s.max_message_chars + 1), 413, "longer than"),
    (lambda s: "hi\x00there", 400, "control character U+0000"),
    (lambda s: "bell\x07", 400, "control character U+0007"),
    (lambda s: "   ", 400, "has no text"),
])
async def test_each_input_limit_holds_on_both_chat_routes(make, settings, db, route, make_body,
                                                          status, message):
    client, model = make()
    text = make_body(settings)
    body = {"message": text} if route == "/api/chat" else {
        "messages": [{"role": "user", "content": text}]}
    before = await db.table_counts()
    async with client:
        r = await client.post(route, json=body)
    assert r.status_code == status and message in json.dumps(r.json()), r.text
    assert model.requests == [] and await db.table_counts() == before


@pytest.mark.parametrize("route", ["/api/chat", "/v1/chat/completions"])
async def test_too_many_photos_and_a_bad_photo_name_on_both_routes(make, route):
    client, model = make(max_photos=2)
    photo = base64.b64encode(jpeg()).decode()
    if route == "/api/chat":
        many = {"message": "hi", "photos": [{"name": "a.jpg", "data": photo}] * 3}
        named = {"message": "hi", "photos": [{"name": "a\x00.jpg", "data": photo}]}
    else:
        part = {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{photo}"}}
        many = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"},
                                                           part, part, part]}]}
        named = {"messages": [{"role": "user", "content": "hi"},
                              {"role": "assistant", "content": "x\x00"},
                              {"role": "user", "content": "hi"}]}
    async with client:
        r_many = await client.post(route, json=many)
        r_named = await client.post(route, json=named)
    assert r_many.status_code == 413 and "at most 2 photos" in r_many.text
    assert r_named.status_code == 400 and "control character" in r_named.text
    assert model.requests == []


async def test_an_image_part_given_as_a_string_is_a_400(make):
    client, _ = make()
    async with client:
        r = await client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": ["just a string"]}]})
    assert r.status_code == 400 and "messages.0.content" in r.json()["error"]["message"]


async def test_deeply_nested_json_is_a_400(make):
    client, _ = make()
    async with client:
        shallow_enough = await client.post("/api/chat", content=b"[" * 40 + b"]" * 40,
                                           headers={"content-type": "application/json"})
        deep = await client.post("/api/chat", content=b"[" * 100_000 + b"]" * 100_000,
                                 headers={"content-type": "application/json"})
    assert shallow_enough.status_code == 400 and "nested deeper" in shallow_enough.text
    # refused from its bytes, before any of it is parsed
    assert deep.status_code == 400 and "more than 20000 lists and objects" in deep.text


async def test_the_media_type_must_be_exactly_json(make):
    client, _ = make()
    async with client:
        r = await client.post("/api/chat", content=b'{"message": "hi"}',
                              headers={"content-type": "text/plain; x=application/json"})
    assert r.status_code == 415


async def test_a_body_is_refused_from_its_content_length_before_it_is_read():
    async def receive():
        raise AssertionError("the body was read")

    scope = {"type": "http", "method": "POST", "path": "/api/chat",
             "headers": [(b"content-length", b"209715200")]}
    with pytest.raises(ClientError) as err:
        await read_body(Request(scope, receive), 1024)
    assert err.value.status == 413


async def test_a_streamed_body_is_cut_off_at_the_limit(make, settings):
    client, model = make()
    sent = 0

    async def chunks():
        nonlocal sent
        for _ in range(200):  # 200 MB if it were all read
            sent += 1
            yield b" " * (1024 * 1024)

    async with client:
        r = await client.post("/api/chat", content=chunks(),
                              headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert sent <= settings.max_body_bytes // (1024 * 1024) + 2
    assert model.requests == []


# --- no leaks ----------------------------------------------------------------------------


@pytest.mark.parametrize(("route", "body"), [
    ("/api/chat", {"message": "hi"}),
    ("/api/chat", {"message": "hi", "stream": True}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
])
async def test_a_provider_error_never_reaches_the_caller(make, caplog, route, body):
    client, _ = make(ModelCallError(f"401 from provider; you sent Authorization: Bearer {LEAK}"))
    caplog.set_level(logging.WARNING, "app.web")
    async with client:
        r = await client.post(route, json=body)
    assert LEAK not in r.text and "provider" not in r.text
    assert "request id" in r.text
    rid = r.headers["x-request-id"]
    assert rid in r.text and rid in caplog.text
    assert LEAK not in caplog.text and "[redacted]" in caplog.text


async def test_an_unexpected_error_is_a_generic_500_with_a_request_id(make, caplog, monkeypatch):
    client, _ = make(RuntimeError(f"token={LEAK}"))
    monkeypatch.setenv("SOME_API_KEY", LEAK)
    caplog.set_level(logging.ERROR, "app.web")
    async with client:
        r = await client.post("/api/chat", json={"message": "hi"})
    assert r.status_code == 500 and LEAK not in r.text
    assert r.headers["x-request-id"] in r.json()["error"]
    assert "RuntimeError" in caplog.text and LEAK not in caplog.text


# --- cross-site requests and headers -------------------------------------------------------


async def test_cross_site_posts_are_refused(make, db):
    client, model = make(demo_signin=True)
    before = await db.table_counts()
    async with client:
        evil = await client.post("/api/session", json={"role": "staff"},
                                 headers={"origin": "http://evil.example"})
        fetch_meta = await client.post("/api/chat", json={"message": "hi"},
                                       headers={"sec-fetch-site": "cross-site"})
        null = await client.post("/api/session", json={"role": "staff"},
                                 headers={"origin": "null"})
        assert await db.table_counts() == before and model.requests == []
        same = await client.post("/api/session", json={"role": "staff"},
                                 headers={"origin": "http://test"})
    assert evil.status_code == fetch_meta.status_code == null.status_code == 403
    assert same.status_code == 200


async def test_a_request_for_another_host_name_is_refused(make):
    """A page whose name rebinds to 127.0.0.1 sends its own Host and a matching Origin."""
    client, model = make(demo_signin=True)
    async with client:
        r = await client.post("/api/session", json={"role": "super_admin"},
                              headers={"host": "rebind.attacker.example:8000",
                                       "origin": "http://rebind.attacker.example:8000"})
    assert r.status_code == 400 and model.requests == []


async def test_pages_carry_security_headers(make):
    client, _ = make()
    async with client:
        page = await client.get("/tools/form-4")
        script = await client.get("/static/chat.js")
        api = await client.get("/api/me")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "<script>" not in page.text  # no inline script
    assert page.headers["x-frame-options"] == "DENY"
    assert script.status_code == 200 and "api/me" in script.text
    for r in (page, script, api):
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-request-id"]


# --- staff-only selections -----------------------------------------------------------------


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


# --- sessions end on the server ------------------------------------------------------------


async def test_signing_out_ends_the_session_for_every_copy_of_the_cookie(make):
    client, _ = make(demo_signin=True)
    async with client:
        await client.post("/api/session", json={"role": "super_admin"})
        copied = dict(client.cookies)
        await client.post("/api/session", json={"role": None})
    thief, _ = make(demo_signin=True)
    async with thief:
        thief.cookies.update(copied)
        me = (await thief.get("/api/me")).json()
    assert me["signed_in"] is None


async def test_a_demo_session_ends_when_the_demo_sign_in_is_turned_off(make):
    demo, _ = make(demo_signin=True)
    async with demo:
        await demo.post("/api/session", json={"role": "super_admin"})
        cookie = dict(demo.cookies)
    later, _ = make()  # the same SESSION_SECRET, demo sign-in off
    async with later:
        later.cookies.update(cookie)
        me = (await later.get("/api/me")).json()
    assert me["signed_in"] is None


async def test_a_session_expires(make, db):
    client, _ = make(demo_signin=True, session_max_age_s=60)
    async with client:
        await client.post("/api/session", json={"role": "staff"})
        assert (await client.get("/api/me")).json()["signed_in"]["role"] == "staff"
        await db.execute("UPDATE sessions SET created_at = now() - interval '2 minutes'")
        assert (await client.get("/api/me")).json()["signed_in"] is None


# --- sign-in: the staff list, verified addresses, conflicts --------------------------------


def oidc(provider, **more):
    return dict(oidc_issuer=provider.issuer, oidc_client_id=CLIENT_ID,
                oidc_client_secret=CLIENT_SECRET, **more)


SAM = {"sub": "u1", "email": "sam@uni.example", "email_verified": True, "name": "Sam"}


async def test_someone_removed_from_the_staff_list_loses_the_role_at_once(make, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: [sam@uni.example]\n")
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, staff_list=staff_list))
        async with client:
            await sign_in(client, provider, SAM)
            before = (await client.get("/api/me")).json()["signed_in"]["role"]
            staff_list.write_text("staff: []\n")
            os.utime(staff_list, (time.time() + 5, time.time() + 5))  # a later mtime
            after = (await client.get("/api/me")).json()["signed_in"]["role"]
    assert (before, after) == ("staff", "student")


async def test_a_staff_list_broken_after_start_makes_sign_in_a_clear_503(make, tmp_path):
    staff_list = tmp_path / "staff.yaml"
    staff_list.write_text("staff: []\n")
    with fake_oidc_provider() as provider:
        client, _ = make(**oidc(provider, staff_list=staff_list))
        staff_list.write_text("staff: [: broken")
        os.utime(staff_list, (time.time() + 5, time.time() + 5))
        async with client:
            r = await sign_in(client, provider, SAM)
    assert r.status_code == 503 and "staff list" in r.json()["error"]


def test_a_broken_staff_list_or_demo_beside_oidc_stops_the_app_at_start(settings, tmp_path):
    from app.web.auth import StaffListError

    broken = tmp_path / "staff.yaml"
    broken.write_text("wizards: []")
    with pytest.raises(StaffListError, match="unknown role 'wizards'"):
        create_app(Settings(**{**settings.model_dump(), "staff_list": broken}))
    with pytest.raises(ValueError, match="cannot be on beside"):
        create_app(Settings(**{**settings.model_dump(), "demo_signin": True,
                               "oidc_issuer": "http://127.0.0.1:9", "oidc_client_id": "x",
                               "oidc_client_secret": "y"}))


async def test_an_address_without_email_verified_is_refused_unless_the_lab_says_so(make):
    unverified = {"sub": "u3", "email": "x@uni.example", "name": "X"}
    with fake_oidc_provider() as provider:
        strict, _ = make(**oidc(provider))
        trusting, _ = make(**oidc(provider, oidc_email_verified=True))
        async with strict, trusting:
            refused = await sign_in(strict, provider, unverified)
            accepted = await sign_in(trusting, provider, unverified)
    assert refused.status_code == 403 and accepted.status_code == 303


async def test_an_address_linked_to_another_account_is_a_clear_409(make):
    with fake_oidc_provider() as provider:
        first, _ = make(**oidc(provider))
        second, _ = make(**oidc(provider))
        async with first, second:
            await sign_in(first, provider, SAM)
            r = await sign_in(second, provider, {**SAM, "sub": "someone-else"})
    assert r.status_code == 409 and "another account" in r.json()["error"]


# --- more input the server refuses or survives ---------------------------------------------


async def test_a_wide_body_is_refused_before_it_is_parsed(make):
    client, model = make()
    keys = ",".join(f'"k{i}": 0' for i in range(60_000))
    async with client:
        started = time.monotonic()
        r = await client.post("/api/chat", content=f'{{"message": "x", {keys}}}'.encode(),
                              headers={"content-type": "application/json"})
        took = time.monotonic() - started
    assert r.status_code == 400 and "more than 100000 values" in r.text and took < 1
    assert model.requests == []


async def test_a_validation_error_lists_only_the_first_few_problems(make):
    client, _ = make()
    async with client:
        r = await client.post("/api/chat", json={"message": "x", "photos": [{}] * 40})
    assert r.status_code == 400 and r.text.count("Field required") == 5
    assert "more" in r.json()["error"] and len(r.text) < 1000


@pytest.mark.parametrize("route", ["/api/chat", "/v1/chat/completions"])
async def test_a_lone_surrogate_is_refused_before_the_model_is_called(make, route):
    client, model = make()
    text = "hi\ud800"
    body = {"message": text} if route == "/api/chat" else {
        "messages": [{"role": "user", "content": text}]}
    async with client:
        r = await client.post(route, content=json.dumps(body).encode(),
                              headers={"content-type": "application/json"})
    assert r.status_code == 400 and "U+D800" in r.text and model.requests == []


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


async def test_a_page_path_with_a_trailing_newline_is_unknown(make):
    client, model = make()
    async with client:
        r = await client.post("/api/chat", json={"message": "hi",
                                                 "page": {"path": "/tools/form-4\n"}})
    assert r.status_code == 400 and model.requests == []
