"""The Matrix tab: stored runs of one plan side by side, filtered, each cell a link to its
evidence; what it refuses; and in a real browser at both widths, a cell followed to its
evidence."""

import asyncio

import pytest

from evals.load.plan import plan_info
from evals.record.store import RunStore
from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, run

BOTH = "/matrix?runs=ws0000base&runs=ws0001run"


def test_two_runs_side_by_side_and_filtered(client):
    empty = client.get("/matrix")
    both = client.get(BOTH)
    failed = client.get(BOTH + "&status=FAIL")
    other_file = client.get(BOTH + "&file=lab-identity.yaml")
    flipped = client.get(BOTH + "&baseline=ws0001run")
    assert "Choose two runs or more" in empty.text and 'value="ws0001run"' in empty.text
    assert '<a href="/matrix" class="on">Matrix</a>' in both.text
    assert ('<a class="badge FAIL" href="/results?run=ws0001run#no-glowforge-r1"'
            in both.text)
    assert '<a class="badge PASS" href="/results?run=ws0000base#no-glowforge-r1"' in both.text
    assert "ws0001run vs ws0000base: 0 improved · 1 regressed" in both.text
    assert "1 of 1 items" in failed.text and "0 of 1 items" in other_file.text
    assert "ws0000base vs ws0001run: 1 improved · 0 regressed" in flipped.text


def _another_plan(info):
    """A third run whose plan repeats each item twice."""
    record = run("ws0003other", "PASS", "We have no Glowforge.", True)
    record.plan = plan_info([], judge_model=None, judge_prompt_hash=None, repeat=2)

    async def save():
        async with RunStore.open(info) as store:
            await store.start_run(record)
            await store.finish_run(record)
    asyncio.run(save())


def test_what_the_tab_refuses(client, stored):
    _another_plan(stored)
    other = client.get(BOTH + "&runs=ws0003other")
    missing = client.get("/matrix?runs=ws0000base&runs=nope")
    not_chosen = client.get(BOTH + "&baseline=ws0003other")
    many = client.get("/matrix?" + "&".join(f"runs=r{i}" for i in range(9)))
    assert other.status_code == 400 and "ran different plans" in other.text
    assert missing.status_code == 404
    assert not_chosen.status_code == 400 and "not one of the columns" in not_chosen.text
    assert many.status_code == 400 and "at most 8 runs" in many.text


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_a_cell_leads_to_its_evidence_in_a_browser(browser, stored, width):
    with serve_in_thread(create_workspace(stored, TOKEN, launcher=Launcher(env={})),
                         lifespan="on") as base:
        page = await opened(browser, base, width)
        async with page.expect_navigation():
            await page.click("nav.tabs >> text=Matrix")
        await page.check('input[value="ws0000base"]')
        await page.check('input[value="ws0001run"]')
        async with page.expect_navigation():
            await page.click("form.picker button")
        await page.select_option("#filter-status", "FAIL")
        async with page.expect_navigation():  # counted once the filtered page is there
            await page.click("form.filters button")
        shown = await page.locator("table.matrix tr").count()
        fitting_matrix = await fits(page)
        await screenshot(page, f"workspace-matrix-{width}")
        async with page.expect_navigation():  # the evidence is the run's page, at its item
            await page.click("a.badge.FAIL")
        target = await page.evaluate("document.querySelector(':target').id")
        is_open = await page.evaluate("document.querySelector(':target').open")
        fitting_evidence = await fits(page)
        problems = page.problems  # type: ignore[attr-defined]
    assert shown == 2 and fitting_matrix  # the header and the one item
    assert target == "no-glowforge-r1" and is_open and fitting_evidence
    assert problems == []
