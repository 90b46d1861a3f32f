"""The workspace (read-only): the token, the run picker, a run's evidence, in the browser."""

import httpx
import pytest

from app.db import scratch_database
from app.web.background import serve_in_thread
from evals.fingerprint import agent_info, plan_info
from evals.results import Attempt, CaseResult, CheckResult, RunRecord
from evals.store import RunStore
from evals.workspace import create_workspace

TOKEN = "the-token"


@pytest.fixture
async def stored(server_conninfo):
    """A store holding one finished run, and its conninfo."""
    async with scratch_database(server_conninfo, prefix="test_ws") as info:
        async with RunStore.open(info) as store:
            record = RunRecord(run_id="ws0001run", status="complete", models={"chat": "m"},
                               plan=plan_info([], judge_model=None, judge_prompt_hash=None,
                                              repeat=1),
                               agent=agent_info("m", {}, {}, ("c", False)),
                               cases=[CaseResult(
                                   id="no-glowforge", file="honest-absence.yaml",
                                   prompt="Glowforge?", status="FAIL", attempts=[Attempt(
                                       answer="Use the Glowforge Pro.", checks=[CheckResult(
                                           kind="no_unknown_tools", passed=False,
                                           reason="offers “Use the Glowforge Pro.”")])])])
            await store.start_run(record)
            for case in record.cases:
                await store.save_case("ws0001run", case)
            await store.flush()
            await store.finish_run(record)
        yield info


def served(info):
    return serve_in_thread(create_workspace(info, TOKEN), lifespan="on")


async def test_nothing_is_shown_without_the_token_and_its_cookie(stored):
    with served(stored) as base:
        async with httpx.AsyncClient(base_url=base) as anyone:
            assert (await anyone.get("/")).status_code == 403
            assert (await anyone.get("/runs/ws0001run")).status_code == 403
            assert (await anyone.get("/?token=guess")).status_code == 403
            assert (await anyone.get("/?token=%C3%A9")).status_code == 403  # not a 500
            anyone.cookies.set("workspace", "forged")
            assert (await anyone.get("/")).status_code == 403
        async with httpx.AsyncClient(base_url=base, follow_redirects=True) as owner:
            opened = await owner.get(f"/?token={TOKEN}")
            cookie = opened.history[0].headers["set-cookie"].lower()
            runs = await owner.get("/")
            run = await owner.get("/runs/ws0001run")
            missing = await owner.get("/runs/nope")
        async with httpx.AsyncClient(base_url=base) as later:
            reused = await later.get(f"/?token={TOKEN}")  # the token opens it once
    assert opened.status_code == 200 and "ws0001run" in runs.text  # redirected, cookie set
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert "Pass rate per file" in runs.text
    assert "<td>honest-absence.yaml</td><td>0%</td>" in runs.text
    assert run.status_code == 200 and "<mark id=" in run.text
    assert missing.status_code == 404 and reused.status_code == 403
    assert "script-src" not in runs.headers["content-security-policy"]  # no script at all


@pytest.mark.parametrize("width", [390, 1440])
async def test_the_runs_page_and_a_failed_check_in_the_browser(stored, width):
    from playwright.async_api import async_playwright

    from tests.app.web.test_browser import ARGS, CHROMIUM

    with served(stored) as base:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = await browser.new_page(viewport={"width": width, "height": 800})
            await page.goto(f"{base}/?token={TOKEN}")
            fits_runs = await page.evaluate(
                "document.scrollingElement.scrollWidth <= innerWidth")
            await page.click("text=ws0001run")
            await page.click("li.check.failed a")
            target = await page.evaluate("document.querySelector(':target').textContent")
            fits_run = await page.evaluate(
                "document.scrollingElement.scrollWidth <= innerWidth")
            await browser.close()
    assert target == "Use the Glowforge Pro." and fits_runs and fits_run
