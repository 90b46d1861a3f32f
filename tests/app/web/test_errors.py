"""Errors as callers see them: their own mistakes named, anything else a request id."""

import logging

import pytest

from app.chat.models import ModelCallError
from tests.app.web.payloads import LEAK


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


async def test_a_validation_error_lists_only_the_first_few_problems(make):
    client, _ = make()
    async with client:
        r = await client.post("/api/chat", json={"message": "x", "photos": [{}] * 40})
    assert r.status_code == 400 and r.text.count("Field required") == 5
    assert "more" in r.json()["error"] and len(r.text) < 1000
