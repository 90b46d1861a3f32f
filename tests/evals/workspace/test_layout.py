"""One layout on every tab at 390 px and 1440 px, in a real browser (Debian's chromium through
Playwright); screenshots go to the git-ignored .screenshots/ folder."""

import pytest

from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN

pytestmark = pytest.mark.slow  # every test drives a browser


@pytest.mark.parametrize("width", WIDTHS)
async def test_one_layout_on_every_tab(browser, stored, tree, width):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    paths = ["/", "/results", "/tests", "/tests/shared", "/tests/case/no-glowforge",
             "/tests/scenario/anonymous-smoke-report",
             "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page",
             "/labels?by=ana"]
    widths, fitting = {}, {}
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base, width)
        for path in paths:
            await page.goto(base + path)
            widths[path] = await page.evaluate("document.querySelector('main').clientWidth")
            fitting[path] = await fits(page)
        await page.goto(base + "/tests")
        await screenshot(page, f"workspace-tests-{width}")
        problems = page.problems  # type: ignore[attr-defined]
    assert all(fitting.values()), fitting
    assert len(set(widths.values())) == 1, widths
    assert next(iter(widths.values())) <= 1440 and problems == []
