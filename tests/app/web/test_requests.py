"""Request bodies and photos: bounded before the work they bound, validated, clear errors."""

import base64
import json
import time

import pytest
from starlette.requests import Request

from app.web.errors import ClientError
from app.web.requests import read_body
from tests.app.images import jpeg
from tests.app.web.payloads import png
from tests.fakes import say

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


@pytest.mark.parametrize(("route", "body"), [
    ("/api/chat", {"message": "hi\ud800"}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi\ud800"}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "a\ud800"},
                                           {"role": "assistant", "content": "b"},
                                           {"role": "user", "content": "hi"}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                              "model": "makerlab\ud800"}),  # echoed in the reply
])
async def test_a_lone_surrogate_is_refused_before_the_model_is_called(make, route, body):
    client, model = make()
    async with client:
        r = await client.post(route, content=json.dumps(body).encode(),
                              headers={"content-type": "application/json"})
    assert r.status_code == 400 and "U+D800" in r.text and model.requests == []
