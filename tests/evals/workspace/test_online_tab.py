"""The Online tab: nothing stored yet, then two weeks of verdicts by two agents, the second
failing a check every time: its week and its agent flagged, charted and tabled; in a real
browser at both widths."""

import asyncio

import pytest

from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.helpers import stored_online_verdicts
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN


def test_nothing_then_a_flagged_week_and_agent(client, stored):
    empty = client.get("/online")
    stored_online_verdicts(stored)
    shown = client.get("/online")
    assert "No online verdicts yet" in empty.text
    assert '<a href="/online" class="on">Online</a>' in shown.text
    assert ("48 verdicts read (1 of another harness and 1 of withdrawn consent left out)"
            in shown.text)
    assert "2 flagged" in shown.text and "failure rate up from 0% (week 2026-W48) to 100%"\
        in shown.text
    assert shown.text.count('<rect class="flagged"') == 1  # the second week of one check
    assert ('<tr class="flagged"><td>not_claimed_done</td><td>anonymous /: agent bbbbbbbb (m,'
            ' from') in shown.text


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_the_trend_in_a_browser(browser, stored, width):
    await asyncio.to_thread(stored_online_verdicts, stored)
    with serve_in_thread(create_workspace(stored, TOKEN, launcher=Launcher(env={})),
                         lifespan="on") as base:
        page = await opened(browser, base, width)
        async with page.expect_navigation():  # counted once the tab's page is there
            await page.click("nav.tabs >> text=Online")
        charts = await page.locator("figure.trend svg").count()
        box = await page.locator("figure.trend svg").first.bounding_box()
        await screenshot(page, f"workspace-online-{width}")
        fitting = await fits(page)
        problems = page.problems  # type: ignore[attr-defined]
    assert charts == 2 and box is not None and box["width"] > 200 and fitting
    assert problems == []
