"""The workspace in a real browser (Debian's chromium through Playwright): a quick run against
a scripted model server followed to Results, a failed check followed to its evidence, a
criterion edited with its diff shown, a stale second tab refused, and one layout at 390 px
and 1440 px. Screenshots go to the git-ignored .screenshots/ folder."""

import os

import pytest
from playwright.async_api import Page

from app.db import scratch_database
from app.web.background import serve_in_thread
from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import chromium, screenshot
from tests.evals.workspace.helpers import TOKEN
from tests.fake_openai import completion, fake_openai_server

WIDTHS = (390, 1440)


@pytest.fixture(scope="module")
async def browser():
    async with chromium() as b:
        yield b


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
    return bool(await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth"))


async def test_a_quick_run_against_a_scripted_model_reaches_results(browser, server_conninfo,
                                                                   tmp_path):
    answer = "We don't have a Glowforge here; the lab's laser cutter is the Trotec Speedy 400."
    async with scratch_database(server_conninfo, prefix="test_ws_run") as info:
        with fake_openai_server(lambda body: (200, completion(answer))) as (model, _):
            env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "EVAL_"))}
            env.update({"DATABASE_URL": info, "MODEL_CHAT": "openai/fake",
                        "MODEL_API_BASE": model, "OPENAI_API_KEY": "sk-test",
                        "DATA_DIR": str(tmp_path / "data"), "PYTHONWARNINGS": "ignore"})
            launcher = Launcher(env=env, artifacts=tmp_path / "runs")
            app = create_workspace(info, TOKEN, launcher=launcher)
            with serve_in_thread(app, lifespan="on") as base:
                page = await opened(browser, base)
                await page.fill("#f-ids", "no-glowforge,no-cnc-router")
                await page.check("input[name=kinds][value=cases]")
                await page.click("text=Review and run")
                review = await page.inner_text("main")
                await page.click("button:has-text('Run')")
                assert page.url.endswith("/results")
                await page.wait_for_selector("#progress .state:text('finished')",
                                             timeout=120_000)
                await page.goto(f"{base}/results")  # the stored run, as anyone opens it
                progress = await page.inner_text("#progress")
                listed = await page.inner_text("main")
                await screenshot(page, "workspace-run-finished")
    assert "2 cases + 0 scenario conversations × 1 repetition(s) = 2 conversations" in review
    assert "2 of 2 finished" in progress and "PASS 2" in progress and "finished" in progress
    assert "2/2 passed" in listed and "honest-absence.yaml" in listed
    assert any((tmp_path / "runs").glob("*.json"))  # the run's artifact


@pytest.mark.parametrize("width", WIDTHS)
async def test_a_failed_check_leads_to_its_highlighted_sentence(browser, stored, width):
    with serve_in_thread(create_workspace(stored, TOKEN, launcher=Launcher(env={})),
                         lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.click("nav.tabs >> text=Results")
        await page.select_option("#run", "ws0001run")
        await page.click("form.picker button")
        await page.click("li.check.failed a")
        target = await page.evaluate("document.querySelector(':target').textContent")
        color = await page.evaluate(
            "getComputedStyle(document.querySelector(':target')).backgroundColor")
        visible = await page.evaluate(
            "(() => { const r = document.querySelector(':target').getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= innerHeight; })()")
        await screenshot(page, f"workspace-failed-evidence-{width}")
        fitting = await fits(page)
    assert target == "Use the Glowforge Pro." and visible and fitting
    assert color == "rgb(255, 241, 168)"  # the highlight


async def test_editing_a_criterion_shows_the_yaml_diff(browser, stored, tree):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base)
        await page.click("nav.tabs >> text=Tests")
        await page.fill("#search", "smoke")
        await page.click("a:text('anonymous-smoke-report')")
        await page.fill("[aria-label='criterion 2']",
                        "The assistant says the report was filed, and its number.")
        await page.click("button:text('Save')")
        diff = await page.inner_text("pre.diff")
        await screenshot(page, "workspace-criterion-diff")
    assert "-    - statement: The assistant says the report was filed only after it was" \
           " filed." in diff
    assert "+    - statement: The assistant says the report was filed, and its number." in diff
    assert "and its number." in tree.read("scenarios/problem-reports.yaml")


async def test_grouping_keeps_rows_a_search_hides(browser, stored, tree):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base)
        await page.goto(f"{base}/tests")
        await page.check("input[aria-label='select no-glowforge']")
        await page.check("input[aria-label='select glowforge-under-pressure']")
        await page.fill("#search", "under-pressure")
        hidden = await page.is_hidden("input[aria-label='select no-glowforge']")
        async with page.expect_navigation():
            await page.click("button:text('Group selected')")
        shown = await page.inner_text("main")
        await page.fill("#f-group", "glowforge")
        await page.click("button:text('Group them')")
        saved = await page.inner_text("main")
        problems = page.problems  # type: ignore[attr-defined]
    assert hidden and "2 selected: no-glowforge, glowforge-under-pressure" in shown
    assert "+  group: glowforge" in saved and problems == []


async def test_a_stale_edit_in_a_second_tab_gets_a_409(browser, stored, tree):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        first = await opened(browser, base)
        second = await first.context.new_page()
        await first.goto(f"{base}/tests/case/no-glowforge")
        await second.goto(f"{base}/tests/case/no-cnc-router")
        await first.fill("#f-group", "absence")
        await first.click("button:text('Save')")
        after_first = tree.read("cases/honest-absence.yaml")
        await second.fill("#f-group", "other")
        async with second.expect_response(lambda r: r.request.method == "POST") as posted:
            await second.click("button:text('Save')")
        status = (await posted.value).status
        said = await second.inner_text("main")
        await screenshot(second, "workspace-stale-409")
    assert status == 409 and "honest-absence.yaml changed since this form was opened" in said
    assert tree.read("cases/honest-absence.yaml") == after_first


@pytest.mark.parametrize("width", WIDTHS)
async def test_one_layout_on_every_tab(browser, stored, tree, width):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    paths = ["/", "/results", "/tests", "/tests/shared", "/tests/case/no-glowforge",
             "/tests/scenario/anonymous-smoke-report",
             "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"]
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
