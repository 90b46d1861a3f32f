"""Consent that lasts: a "no" reaches every conversation of the person who gave it, across a
restart of the app, and across signing in from an anonymous session."""

import httpx
import pytest

from app.settings import Settings
from app.web import create_app
from evals.authoring.from_conversations import NoConversations, make_cases
from tests.app.web.test_auth import SAM, oidc, sign_in
from tests.fake_oidc import fake_oidc_provider
from tests.fakes import ScriptedModel, say

MINE = "is the form 4 free this afternoon?"
CONTROL = "is the trotec free this afternoon?"


def start(db, settings, cookies=None, **overrides) -> httpx.AsyncClient:
    """The app (as a fresh start would make it) and a browser holding `cookies`."""
    app = create_app(Settings(**{**settings.model_dump(), "session_secret": None, **overrides}),
                     db=db,
                     model=ScriptedModel(say("The Form 4 is free."), repeat=True))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")
    client.cookies.update(cookies or {})
    return client


async def corrected(client: httpx.AsyncClient, first: str) -> None:
    """A conversation that becomes a case: the person corrects the assistant."""
    r = await client.post("/api/chat", json={"message": first})
    assert r.status_code == 200, r.text
    r = await client.post("/api/chat", json={"message": "no, that's wrong",
                                             "conversation_id": r.json()["conversation_id"]})
    assert r.status_code == 200, r.text


async def prompts_of_cases(db) -> list[str]:
    made = await make_cases(db, count=10)
    return [case["history"][0]["user"] for _, case in made.cases if case.get("history")]


async def control_person(db, settings) -> None:
    async with start(db, settings) as other:
        await other.post("/api/consent", json={"consent": True})
        await corrected(other, CONTROL)


@pytest.mark.parametrize("who", ["anonymous", "signed-in"])
async def test_a_no_after_a_restart_reaches_the_conversations_before_it(db, settings, who):
    await control_person(db, settings)
    async with start(db, settings, demo_signin=True) as before:
        if who == "signed-in":
            await before.post("/api/session", json={"role": "student"})
        assert (await before.post("/api/consent", json={"consent": True})).json() == {
            "consent": True}
        await corrected(before, MINE)
        cookies = dict(before.cookies)
    assert MINE in await prompts_of_cases(db)
    async with start(db, settings, cookies, demo_signin=True) as after:  # a restart
        assert (await after.get("/api/consent")).json() == {"consent": True}
        assert (await after.post("/api/consent", json={"consent": False})).json() == {
            "consent": False}
    assert await prompts_of_cases(db) == [CONTROL]


async def test_signing_in_takes_the_anonymous_conversations_along(db, settings):
    await control_person(db, settings)
    with fake_oidc_provider() as provider:
        async with start(db, settings, **oidc(provider)) as browser:
            await browser.post("/api/consent", json={"consent": True})
            await corrected(browser, MINE)
            assert MINE in await prompts_of_cases(db)
            assert (await sign_in(browser, provider, SAM)).status_code == 303
            assert (await browser.post("/api/consent", json={"consent": False})).json() == {
                "consent": False}
    assert await prompts_of_cases(db) == [CONTROL]


async def test_a_signed_in_persons_no_covers_all_their_references(db, settings):
    async with start(db, settings, demo_signin=True) as browser:
        await browser.post("/api/consent", json={"consent": True})
        await corrected(browser, MINE)
        await browser.post("/api/session", json={"role": "student"})
        await browser.post("/api/consent", json={"consent": False})
    with pytest.raises(NoConversations, match="no stored conversation has its person's"):
        await make_cases(db, count=10)


async def test_an_anonymous_no_stays_a_no_whoever_signs_in_from_that_session(db, settings):
    await control_person(db, settings)
    async with start(db, settings, demo_signin=True) as browser:
        await browser.post("/api/consent", json={"consent": False})
        await corrected(browser, MINE)
        await browser.post("/api/session", json={"role": "student"})
        assert (await browser.post("/api/consent", json={"consent": True})).json() == {
            "consent": True}
    assert await prompts_of_cases(db) == [CONTROL]


async def test_the_anonymous_session_is_linked_though_the_way_back_drops_its_cookie(db,
                                                                                      settings):
    """A browser does not send the strict session cookie with the provider's redirect from
    its own site: the sign-in cookie carries the anonymous session instead."""
    await control_person(db, settings)
    with fake_oidc_provider() as provider:
        async with start(db, settings, **oidc(provider)) as browser:
            await browser.post("/api/consent", json={"consent": True})
            await corrected(browser, MINE)
            provider.user = SAM
            sent = await browser.get("/auth/login")
            async with httpx.AsyncClient() as at_provider:
                back = (await at_provider.get(sent.headers["location"])).headers["location"]
            cross_site = start(db, settings, **oidc(provider))
            cross_site.cookies.set("sign_in", browser.cookies["sign_in"], domain="test.local",
                                   path="/auth/callback")
            async with cross_site:
                done = await cross_site.get(back)
                assert done.status_code == 303 and "session" in cross_site.cookies
                assert "sign_in" not in cross_site.cookies  # used once, then deleted
                signed_in = dict(cross_site.cookies)
        async with start(db, settings, signed_in, **oidc(provider)) as browser:
            assert (await browser.get("/api/me")).json()["signed_in"]["name"] == "Sam"
            await browser.post("/api/consent", json={"consent": False})
    assert await prompts_of_cases(db) == [CONTROL]


async def test_a_tampered_sign_in_cookie_signs_nobody_in(db, settings, caplog):
    with fake_oidc_provider() as provider:
        provider.user = SAM
        async with start(db, settings, **oidc(provider)) as browser:
            sent = await browser.get("/auth/login")
            async with httpx.AsyncClient() as at_provider:
                back = (await at_provider.get(sent.headers["location"])).headers["location"]
            browser.cookies.set("sign_in", browser.cookies["sign_in"][:-2] + "xx",
                                domain="test.local", path="/auth/callback")
            caplog.clear()
            r = await browser.get(back)
            me = (await browser.get("/api/me")).json()
    assert r.status_code == 400 and me["signed_in"] is None
    assert [rec.exc_info for rec in caplog.records if rec.levelname == "WARNING"] == [None]
