"""The save every editing tab shares (Starlette's test client; a second tab in a real browser):
an unchanged form writes nothing, a stale revision is a 409 and an invalid edit a 422 with the
loader's message, both writing nothing; frozen tool responses as a typed form and as raw JSON."""

import pytest

from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, form_of, post, unescape


def test_saving_an_unchanged_form_writes_nothing(client, tree):
    before = {n: tree.read(n) for n in tree.files()}
    for action in ("/tests/case/student-in-distress", "/tests/scenario/anonymous-smoke-report",
                   "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"):
        saved = post(client, action, form_of(client.get(action).text, action))
        assert saved.status_code == 200 and "No change" in saved.text, action
    shared = form_of(client.get("/tests/shared").text, "/tests/shared")
    assert "No change" in post(client, "/tests/shared", shared).text
    assert {n: tree.read(n) for n in tree.files()} == before


def test_a_stale_edit_is_a_409_naming_the_file_and_writes_nothing(client, tree):
    name = "cases/honest-absence.yaml"
    first = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    second = form_of(client.get("/tests/case/no-cnc-router").text, "/tests/case/no-cnc-router")
    first["group"] = ["absence"]
    assert post(client, "/tests/case/no-glowforge", first).status_code == 200
    after_first = tree.read(name)
    second["group"] = ["other"]  # opened before the first save: its revision is stale
    stale = post(client, "/tests/case/no-cnc-router", second)
    assert stale.status_code == 409 and "honest-absence.yaml changed since" in stale.text
    assert tree.read(name) == after_first


def test_an_invalid_edit_is_refused_with_the_loaders_message(client, tree):
    before = tree.read("cases/honest-absence.yaml")
    fields = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    fields["group"] = ["!bad group"]
    refused = post(client, "/tests/case/no-glowforge", fields)
    assert refused.status_code == 422 and "honest-absence.yaml:" in unescape(refused.text)
    assert "group" in unescape(refused.text) and tree.read("cases/honest-absence.yaml") == before


def test_frozen_responses_as_a_typed_form_and_as_raw_json(client, tree):
    name = "scenarios/curation.yaml"
    action = "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"
    typed = form_of(client.get(action).text, action)
    assert typed["r.url"] == ["https://formlabs.example/form-4/tech-specs"]
    assert typed["at"] == ["default-1"]
    added = form_of(client.get(f"{action}&at=default-new").text, action)
    added["r.error"] = ["timed out"]
    assert post(client, action, added).status_code == 200
    assert "        - error: timed out\n      exhausted: repeat_last" in tree.read(name)
    raw_page = client.get(f"{action}&at=default-2").text
    start = raw_page.index('name="mode" value="raw"')
    raw = form_of(raw_page[start - 400:], action)
    assert raw["at"] == ["default-2"] and '"error": "timed out"' in raw["raw"][0]
    raw["raw"] = ["{\"url\": 3}"]
    before = tree.read(name)
    refused = post(client, action, raw)
    assert refused.status_code == 422 and "does not fit the result schema" in unescape(refused.text)
    raw["raw"] = ["not json"]
    assert post(client, action, raw).status_code == 422 and tree.read(name) == before


@pytest.mark.slow
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
