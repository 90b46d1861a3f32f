"""Groups on the Tests tab: the selected tests grouped (in a real browser, a search keeps the
rows it hides selected), and a rename refused on a taken name or changed members."""

import pytest

from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.evals.workspace.browser import opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, form_of, post, unescape


def test_group_selected_freezes_the_selection_and_writes_every_file(client, tree):
    opened = client.get("/tests/group?pick=no-glowforge&pick=glowforge-under-pressure")
    fields = form_of(opened.text, "/tests/group")
    assert fields["pick"] == ["no-glowforge", "glowforge-under-pressure"]
    fields["group"] = ["glowforge"]
    assert post(client, "/tests/group", fields).status_code == 200
    assert "- id: no-glowforge\n  group: glowforge\n" in tree.read("cases/honest-absence.yaml")
    assert "- id: glowforge-under-pressure\n  group: glowforge\n" in tree.read(
        "scenarios/machines-we-lack.yaml")


def test_renaming_a_group_is_refused_on_a_taken_name_or_changed_members(client, tree):
    fields = form_of(client.get("/tests/rename?group=safety").text, "/tests/rename")
    before = {n: tree.read(n) for n in tree.files()}
    taken = dict(fields, to=["maintenance"])
    refused = post(client, "/tests/rename", taken)
    assert refused.status_code == 409 and "'maintenance' exists already" in unescape(refused.text)
    other = form_of(client.get("/tests/group?pick=no-glowforge").text, "/tests/group")
    other["group"] = ["safety"]  # a member joins after the rename form was opened
    assert post(client, "/tests/group", other).status_code == 200
    changed = {n: tree.read(n) for n in tree.files()}
    moved = post(client, "/tests/rename", dict(fields, to=["first aid"]))
    assert moved.status_code == 409 and "members of 'safety' changed" in unescape(moved.text)
    assert {n: tree.read(n) for n in tree.files()} == changed != before
    fresh = form_of(client.get("/tests/rename?group=safety").text, "/tests/rename")
    assert post(client, "/tests/rename", dict(fresh, to=["first aid"])).status_code == 200
    assert "group: first aid" in tree.read("cases/honest-absence.yaml")
    assert "group: first aid" in tree.read("scenarios/safety.yaml")


@pytest.mark.slow
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
