"""The workspace's browser tests' parts: the workspace served over real HTTP, a page opened on
it (its errors collected), and whether the page fits the window without scrolling sideways."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.serving import serve_in_thread
from tests.evals.workspace.helpers import TOKEN

if TYPE_CHECKING:  # the browser's module is imported where a browser is launched
    from playwright.async_api import Page

__all__ = ["WIDTHS", "fits", "opened", "serve_in_thread"]

WIDTHS = (390, 1440)


async def opened(browser, base: str, width: int = 1440) -> Page:
    context = await browser.new_context(viewport={"width": width, "height": 900})
    page = await context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.problems = problems  # type: ignore[attr-defined]
    await page.goto(f"{base}/?token={TOKEN}")
    return page


async def fits(page: Page) -> bool:
    """No sideways scroll, measured once the document is whole (a page still loading has no
    scrolling element yet). Waited for by `evaluate`, which the page's Content Security Policy
    allows, not by `wait_for_function`, whose polling evaluates a string inside the page and is
    refused there (`script-src 'self'`)."""
    await page.wait_for_load_state("load")
    return bool(await page.evaluate("""() => new Promise(done => {
        const measure = () => done(document.scrollingElement.scrollWidth <= innerWidth);
        if (document.readyState === 'complete') measure();
        else addEventListener('load', measure, {once: true});
    })"""))
