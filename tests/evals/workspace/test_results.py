"""The Results tab: pass rates, comparisons, a run's evidence with a failed check linked to its
sentence and the assessments stored beside it, and a launched run's output without its
secrets; in a real browser, a quick run started on the Overview followed to its results."""

import asyncio
import os
import re

import pytest

from app.db import scratch_database
from evals.record.assessment import AssessedCase, AssessedCheck, Assessment, save_assessment
from evals.record.results import CheckResult
from evals.record.store import RunStore
from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN
from tests.fake_openai import completion, fake_openai_server


def test_the_tabs_and_a_runs_evidence(client):
    overview = client.get("/")
    results = client.get("/results?run=ws0001run")
    filtered = client.get("/results?run=ws0001run&status=PASS")
    legacy = client.get("/runs/ws0001run")
    comparisons = re.findall(r'href="/comparisons/([a-z0-9]+)"', results.text)
    comparison = client.get(f"/comparisons/{comparisons[0]}")
    missing = client.get("/results?run=nope")
    tests = client.get("/tests")
    assert "quick: one calm visitor per scenario" in overview.text
    assert "1 regressed" in overview.text  # previous comparisons with their outcomes
    assert '<mark id="no-glowforge-r1-a1-q0">Use the Glowforge Pro.</mark>' in results.text
    assert 'href="#no-glowforge-r1-a1-q0"' in results.text  # the failed check links to it
    assert "Pass rate per file" in results.text and 'style="width:0%"' in results.text
    assert "<mark" not in filtered.text  # filtered to PASS: the failed case is not listed
    assert legacy.url.path == "/results" and "Use the Glowforge Pro." in legacy.text
    assert 'class="regressed" style="width:100.0%"' in comparison.text
    assert ("<h2>Why they moved</h2><p>1 regressed (no-glowforge) · anonymous on /: after the"
            " system prompt changed</p>") in comparison.text
    assert "+Offer any machine &lt;b&gt;asked&lt;/b&gt; for." in comparison.text  # escaped
    assert missing.status_code == 404
    assert "no-glowforge" in tests.text and "anonymous-smoke-report" in tests.text
    assert "script-src 'self'" in tests.headers["content-security-policy"]


def _rescored(info):
    """A rescore of the failing run stored beside it: today's check passes its answer."""
    check = CheckResult(kind="no_unknown_tools", passed=True, reason="ok <b>today</b>")
    assessment = Assessment(
        id="ws0002resc", run_id="ws0001run", kind="rescore", created="2026-12-03T10:00:00+00:00",
        harness="0123456789abcdef",
        cases=[AssessedCase(id="no-glowforge", repetition=1, status="PASS",
                            checks=[AssessedCheck(attempt=1, check=1, result=check)])])

    async def save():
        async with RunStore.open(info) as store:
            assert await save_assessment(store, assessment) == []
    asyncio.run(save())


def test_a_runs_assessments_are_shown_after_its_own_results(client, stored):
    _rescored(stored)
    results = client.get("/results?run=ws0001run").text
    assert "ws0001run" in results and "· 1 assessment(s)</option>" in results
    assert results.index("FAIL (1)") < results.index("Assessments beside this run (1)")
    assert '<details class="item" id="assessment-ws0002resc" open>' in results
    assert ('<span class="id">no-glowforge</span> #1: <span class="FAIL">FAIL</span> →'
            ' <span class="PASS">PASS</span>') in results
    assert "ok &lt;b&gt;today&lt;/b&gt;" in results  # escaped
    assert "Assessments beside" not in client.get("/results?run=ws0000base").text


def test_a_runs_output_is_shown_without_its_secrets(client, launcher, monkeypatch):
    import datetime as dt

    from evals.workspace.launch import Job

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef123456")
    job = Job("job1", "quick run of everything", [["run"]], dt.datetime.now(dt.UTC))
    job.output.append("provider said: bad key sk-live-abcdef123456")
    job.returncode = 1
    launcher.latest = job
    shown = client.get("/results").text
    assert "quick run of everything" in shown and "finished" in shown
    assert "sk-live-abcdef123456" not in shown and "[redacted]" in shown


@pytest.mark.slow
async def test_a_quick_run_against_a_scripted_model_reaches_results(browser, server_conninfo,
                                                                   store_template, tmp_path):
    answer = "We don't have a Glowforge here; the lab's laser cutter is the Trotec Speedy 400."
    async with scratch_database(server_conninfo, prefix="test_ws_run",
                                template=store_template) as info:
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_an_assessment_reads_beside_the_run_in_a_browser(browser, stored, width):
    await asyncio.to_thread(_rescored, stored)
    with serve_in_thread(create_workspace(stored, TOKEN, launcher=Launcher(env={})),
                         lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.goto(f"{base}/results?run=ws0001run#assessment-ws0002resc")
        panel = page.locator("#assessment-ws0002resc")
        is_open = await panel.evaluate("d => d.open")
        row = await panel.locator("table.grid tr").nth(1).inner_text()
        await screenshot(page, f"workspace-assessment-{width}")
        fitting = await fits(page)
    assert is_open and fitting
    assert row.split() == ["no-glowforge", "1", "1", "no_unknown_tools", "fail", "pass",
                           "recorded:", "offers", "“Use", "the", "Glowforge", "Pro.”",
                           "assessed:", "ok", "<b>today</b>"]
