"""What every request passes through: the cross-site check, security headers, and a generic
500 for an unexpected error."""

import logging

from tests.app.web.payloads import LEAK


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


async def test_an_unexpected_error_is_a_generic_500_with_a_request_id(make, caplog, monkeypatch):
    client, _ = make(RuntimeError(f"token={LEAK}"))
    monkeypatch.setenv("SOME_API_KEY", LEAK)
    caplog.set_level(logging.ERROR, "app.web")
    async with client:
        r = await client.post("/api/chat", json={"message": "hi"})
    assert r.status_code == 500 and LEAK not in r.text
    assert r.headers["x-request-id"] in r.json()["error"]
    assert "RuntimeError" in caplog.text and LEAK not in caplog.text
