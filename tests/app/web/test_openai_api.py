"""POST /v1/chat/completions: the assistant behind an OpenAI-compatible endpoint."""

import json

from tests.fakes import say


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


async def test_an_image_part_given_as_a_string_is_a_400(make):
    client, _ = make()
    async with client:
        r = await client.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": ["just a string"]}]})
    assert r.status_code == 400 and "messages.0.content" in r.json()["error"]["message"]
