"""The HTML pages, and the chat page in a real browser (Debian's chromium driven by
Playwright), at phone and desktop widths: it works under its own Content-Security-Policy and
the Origin check, and shows the sign-in the server offers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from app.serving import serve_in_thread
from app.settings import Settings
from app.web import create_app
from tests.browser import chromium
from tests.fake_oidc import CLIENT_ID, CLIENT_SECRET, fake_oidc_provider
from tests.fakes import ScriptedModel, say

if TYPE_CHECKING:
    from playwright.async_api import Page


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


WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


@pytest.fixture(scope="module")
async def browser():
    async with chromium() as b:
        yield b


async def open_page(browser, base: str, width: str) -> tuple[Page, list[str]]:
    context = await browser.new_context(viewport=WIDTHS[width])
    page = await context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    await page.goto(f"{base}/tools/form-4")
    return page, problems


async def fits(page: Page) -> bool:
    return bool(await page.evaluate(
        "document.scrollingElement.scrollWidth <= window.innerWidth"))


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_the_demo_sign_in_and_a_streamed_answer_work_in_the_browser(browser, db,
                                                                          settings, width):
    model = ScriptedModel(say("The Form 4 prints resin parts."))
    app = create_app(settings.model_copy(update={"demo_signin": True}), db=db, model=model)
    with serve_in_thread(app) as base:
        page, problems = await open_page(browser, base, width)
        await page.wait_for_selector("#demo:not(.hidden)")
        async with page.expect_response("**/api/session") as signed:
            await page.select_option("#role", "staff")
        assert (await signed.value).status == 200  # the browser's Origin is accepted
        await page.fill("#message", "What does this machine make?")
        await page.click("button[type=submit]")
        await page.wait_for_selector("#log .assistant")
        answer = await page.inner_text("#log .assistant")
        fit = await fits(page)
        await page.context.close()
    assert answer == "The Form 4 prints resin parts."
    assert problems == []  # no script, style or connection blocked by the policy
    assert fit


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_without_the_demo_the_page_offers_the_university_sign_in(browser, db, settings,
                                                                       width):
    app = create_app(settings.model_copy(update={
        "oidc_issuer": "http://127.0.0.1:9", "oidc_client_id": "x",
        "oidc_client_secret": settings.session_secret}), db=db, model=ScriptedModel())
    with serve_in_thread(app) as base:
        page, problems = await open_page(browser, base, width)
        await page.wait_for_selector("#sign-in:not(.hidden)")
        demo_shown = await page.is_visible("#demo")
        href = await page.get_attribute("#sign-in", "href")
        fit = await fits(page)
        await page.context.close()
    assert not demo_shown and href == "/auth/login"
    assert problems == [] and fit


@pytest.mark.slow
async def test_signing_in_at_a_provider_on_another_site_works_in_the_browser(browser, db,
                                                                             settings):
    """The provider sends the browser back from another site: the session cookie (holding
    the sign-in's state) must travel with that navigation."""
    with fake_oidc_provider("localhost") as provider:
        provider.user = {"sub": "u1", "email": "kim@uni.example", "email_verified": True,
                         "name": "Kim Lee"}
        provider.interactive = True
        app = create_app(Settings(**{**settings.model_dump(), "oidc_issuer": provider.issuer,
                                     "oidc_client_id": CLIENT_ID,
                                     "oidc_client_secret": CLIENT_SECRET}), db=db,
                         model=ScriptedModel())
        with serve_in_thread(app) as base:
            page, problems = await open_page(browser, base, "desktop")
            await page.click("#sign-in")
            await page.click("#continue")  # at the provider, on its own site
            await page.wait_for_selector("#signed-in:not(.hidden)")
            who = await page.inner_text("#person")
            await page.context.close()
    assert who == "Kim Lee (student)" and problems == []
