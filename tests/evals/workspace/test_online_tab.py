"""The Online tab: nothing stored yet, then two weeks of verdicts by two agents, the second
failing a check every time: its week and its agent flagged, charted and tabled; in a real
browser at both widths."""

import asyncio
import datetime as dt

import psycopg
import pytest

from app.db import Database
from evals.load.plan import harness_hash
from evals.record.online import OnlineVerdict
from evals.record.store import RunStore
from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN

MONDAY = dt.datetime(2026, 11, 23, 10, tzinfo=dt.UTC)


CONVERSATION = "6f1c7a52-3b8e-4f43-9a7e-2d1b7c9e0a11"


def _verdicts(info):
    """48 verdicts of today's harness on one consented conversation, and 2 that the trend
    leaves out: one of another harness, one of a conversation without consent."""
    verdicts = []
    for n in range(24):
        later = n >= 12
        at = MONDAY + dt.timedelta(days=7 if later else 0, minutes=n)
        for kind in ("not_claimed_done", "citations_resolve"):
            said = "undecided" if kind == "citations_resolve" else "fail" if later else "pass"
            verdicts.append(OnlineVerdict(
                turn_id=n, conversation=CONVERSATION, turn_at=at, context="anonymous /",
                agent="b" * 12 if later else "a" * 12, model="m", kind=kind, verdict=said,
                harness=harness_hash()))
    left_out = [verdicts[0].model_copy(update={"harness": "older", "turn_id": 99}),
                verdicts[0].model_copy(update={"conversation": "no-consent", "turn_id": 98})]

    async def save():
        app_db = Database(info, max_size=1)  # the app's tables, as the app makes them
        await app_db.open()
        await app_db.close()
        async with await psycopg.AsyncConnection.connect(info) as owner:
            await owner.execute("INSERT INTO conversations (id, user_ref) VALUES (%s, 'u1')",
                                (CONVERSATION,))
            await owner.execute("INSERT INTO research_consent (user_ref, consent)"
                                " VALUES ('u1', true)")
            await owner.commit()
        async with RunStore.open(info) as store:
            assert await store.save_online(verdicts + left_out) == 50
    asyncio.run(save())


def test_nothing_then_a_flagged_week_and_agent(client, stored):
    empty = client.get("/online")
    _verdicts(stored)
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
    await asyncio.to_thread(_verdicts, stored)
    with serve_in_thread(create_workspace(stored, TOKEN, launcher=Launcher(env={})),
                         lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.click("nav.tabs >> text=Online")
        charts = await page.locator("figure.trend svg").count()
        box = await page.locator("figure.trend svg").first.bounding_box()
        await screenshot(page, f"workspace-online-{width}")
        fitting = await fits(page)
        problems = page.problems  # type: ignore[attr-defined]
    assert charts == 2 and box is not None and box["width"] > 200 and fitting
    assert problems == []
