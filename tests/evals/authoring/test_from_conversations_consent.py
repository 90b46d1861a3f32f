"""Consent that lasts: a "no" reaches every conversation of the person who gave it, across a
restart of the app, and across signing in from an anonymous session; and a yes reaches only
the conversations it was given for: an anonymous session's own, never one a later sign-in on
the same browser says yes after."""

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


THEIRS = "is the haas free this afternoon?"
LATER = "is the shopbot free this afternoon?"


class Browser:
    """One browser shared by several people, with the sign-in the app offers (the demo
    sign-in or the university's provider)."""

    def __init__(self, client: httpx.AsyncClient, provider, way: str) -> None:
        self.client, self.provider, self.way = client, provider, way

    async def sign_in(self) -> None:
        if self.way == "demo":
            r = await self.client.post("/api/session", json={"role": "student"})
            assert r.status_code == 200, r.text
        else:
            assert (await sign_in(self.client, self.provider, SAM)).status_code == 303

    async def sign_out(self) -> None:
        if self.way == "demo":
            r = await self.client.post("/api/session", json={"role": None})
        else:
            r = await self.client.post("/auth/logout")
        assert r.status_code in (200, 303), r.text
        assert (await self.client.get("/api/me")).json()["signed_in"] is None

    async def answer(self, consent: bool) -> None:
        r = await self.client.post("/api/consent", json={"consent": consent})
        assert r.json() == {"consent": consent}


def shared_browser(db, settings, provider, way: str) -> Browser:
    extra = {"demo_signin": True} if way == "demo" else oidc(provider)
    return Browser(start(db, settings, **extra), provider, way)


@pytest.mark.parametrize("way", ["demo", "oidc"])
async def test_signing_in_does_not_turn_an_anonymous_visitors_silence_into_a_yes(
        db, settings, way):
    """A visitor chats without answering the consent question; the next person signs in on
    the same browser and says yes: their own conversations become cases, the visitor's do
    not."""
    await control_person(db, settings)
    with fake_oidc_provider() as provider:
        browser = shared_browser(db, settings, provider, way)
        async with browser.client:
            await corrected(browser.client, MINE)  # anonymous, never asked
            await browser.sign_in()
            await browser.answer(True)
            await corrected(browser.client, THEIRS)
    assert sorted(await prompts_of_cases(db)) == sorted([CONTROL, THEIRS])


@pytest.mark.parametrize("way", ["demo", "oidc"])
@pytest.mark.parametrize("first_answer", [True, False, None],
                         ids=["yes-in-session", "explicit-no", "silent"])
async def test_an_anonymous_conversation_is_a_case_only_on_its_own_sessions_yes(
        db, settings, way, first_answer):
    """Two anonymous sessions on one browser, a person signing in after each and saying yes:
    the first session's conversation is a case only when its visitor said yes in it, the
    second's (whose visitor never answered) never, and the person's own always."""
    await control_person(db, settings)
    with fake_oidc_provider() as provider:
        browser = shared_browser(db, settings, provider, way)
        async with browser.client:
            if first_answer is not None:
                await browser.answer(first_answer)
            await corrected(browser.client, MINE)
            await browser.sign_in()
            await browser.answer(True)
            await corrected(browser.client, THEIRS)
            await browser.sign_out()
            assert (await browser.client.get("/api/consent")).json() == {"consent": False}
            await corrected(browser.client, LATER)  # a new anonymous session, never asked
            await browser.sign_in()
            assert (await browser.client.get("/api/consent")).json() == {"consent": True}
    expected = [CONTROL, THEIRS] + ([MINE] if first_answer else [])
    assert sorted(await prompts_of_cases(db)) == sorted(expected)
