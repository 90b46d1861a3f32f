"""A scenario's expected actions in the Tests tab: listed apart from its criteria, edited in the
scenario's form (a selector changed, added, removed; an action added and removed) with the
rest of the file as written and the diff shown; checked by the scenario loader on the file as it
would be after every change of the form (criteria too), a conflict refused saying what to
review; a stale form a 409; nothing written on a refusal; and in a real browser at 390 and
1440 px."""

import pytest

from evals.workspace import create_workspace, expected
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, form_of, post, unescape

FILE = "scenarios/problem-reports.yaml"
SMOKE = "/tests/scenario/anonymous-smoke-report"


def test_a_selectors_value_reads_back_as_it_is_shown():
    for value, form in [("smoke", "contains"), ("trotec-speedy-400", "is"), ("7", "is"), (7, "is"),
                        (True, "is"), (None, "is"), (["open", None], "in"), ("true", "is"),
                        ("^https://", "matches")]:
        assert expected.read(expected.shown(value, form), form) == value, value
    assert expected.read("open, in_progress", "in") == ["open", "in_progress"]


def test_expected_actions_are_listed_apart_from_the_criteria(client):
    listing = unescape(client.get("/tests").text)
    assert "Expected actions</p><ul class=\"expected\"><li><code>report_issue · arguments" \
           ' {slug: "trotec-speedy-400"} · result {filed: true}</code>' in listing
    page = client.get(SMOKE).text
    assert page.index("<h3>Criteria</h3>") < page.index("<h3>Expected actions</h3>")
    fields = form_of(page, SMOKE)
    assert fields["a0.tool"] == ["report_issue"] and fields["a1.tool"] == [""]
    assert fields["a0.arguments.field"] == ["slug", ""]
    assert fields["a0.result.value"] == ["true", ""]


def test_a_valid_edit_is_saved_with_its_diff_and_the_rest_kept(client, tree):
    before = tree.read(FILE)
    fields = form_of(client.get(SMOKE).text, SMOKE)
    fields["a0.arguments.field"][1] = "description"  # the empty row: a new selector
    fields["a0.arguments.form"][1] = "contains"
    fields["a0.arguments.value"][1] = "smoke"
    fields["a1.tool"] = ["get_machine_details"]  # a new action
    fields["a1.arguments.field"] = ["slug"]
    fields["a1.arguments.value"] = ["trotec-speedy-400"]
    saved = post(client, SMOKE, fields)
    assert saved.status_code == 200
    diff = unescape(saved.text)
    assert "+      arguments: {slug: trotec-speedy-400, description_contains: smoke}" in diff
    assert "+    - tool: get_machine_details" in diff
    after = tree.read(FILE)
    assert after.replace("{slug: trotec-speedy-400, description_contains: smoke}\n      result:"
                         " {filed: true}\n    - tool: get_machine_details\n      arguments:"
                         " {slug: trotec-speedy-400}",
                         "{slug: trotec-speedy-400}\n      result: {filed: true}") == before


@pytest.mark.parametrize(("tool", "field", "says"), [
    ("update_ticket", "slug",  # never offered to an anonymous visitor
     "expect_actions: 'update_ticket' is not a tool offered here (offered:"),
    ("report_issue", "colour",
     "report_issue arguments: unknown field 'colour'; known: description, reporter_name, slug,"
     " title"),
])
def test_a_conflict_refuses_the_save_and_says_what_to_review(client, tree, tool, field, says):
    before = {n: tree.read(n) for n in tree.files()}
    fields = form_of(client.get(SMOKE).text, SMOKE)
    fields["statement"][0] = "A criterion edited in the same save."
    fields["a0.tool"] = [tool]
    fields["a0.arguments.field"][0] = field
    refused = post(client, SMOKE, fields)
    said = unescape(refused.text)
    assert refused.status_code == 422
    assert "Review its expected actions (their tools and selectors)" in said and says in said
    assert "problem-reports.yaml:" in said and "Nothing was written." in said
    assert {n: tree.read(n) for n in tree.files()} == before


@pytest.mark.parametrize("depth", [40, 3000])
def test_a_selector_nested_too_deep_is_refused_not_a_crash(client, tree, depth):
    before = {n: tree.read(n) for n in tree.files()}
    fields = form_of(client.get(SMOKE).text, SMOKE)
    fields["a0.arguments.value"][0] = "[" * depth + "]" * depth
    refused = post(client, SMOKE, fields)
    assert refused.status_code == 422
    assert "a selector&#x27;s value: nested deeper than 32 levels" in refused.text
    assert {n: tree.read(n) for n in tree.files()} == before


def test_an_expected_action_numbered_strangely_is_read_as_a_new_one(client, tree):
    before = tree.read(FILE)
    fields = form_of(client.get(SMOKE).text, SMOKE)
    fields["a0.index"] = ["²"]  # not a place in the file: read as a new action, the same one
    saved = post(client, SMOKE, fields)
    assert saved.status_code == 200 and "No change: the files already said that." in saved.text
    assert tree.read(FILE) == before


def test_the_check_is_on_the_final_state_of_criteria_and_expected_actions(client, tree):
    name, action = "scenarios/curation.yaml", "/tests/scenario/web-page-with-frozen-answer"
    before = tree.read(name)
    fields = form_of(client.get(action).text, action)
    fields["remove"] = ["0"]  # its only criterion
    fields["a0.remove"] = ["1"]  # and its only expected action: nothing would be checked
    refused = post(client, action, fields)
    assert refused.status_code == 422 and tree.read(name) == before
    assert "a scenario needs criteria, expect_actions, end_state or assert" in \
        unescape(refused.text)
    del fields["a0.remove"]  # the criterion alone: the expected action still checks it
    assert post(client, action, fields).status_code == 200
    assert "criteria:" not in tree.read(name).split("- id: web-page-with-frozen-answer")[1]


def test_a_stale_expected_action_edit_is_a_409_and_writes_nothing(client, tree):
    first = form_of(client.get(SMOKE).text, SMOKE)
    second = form_of(client.get(SMOKE).text, SMOKE)
    first["a0.result.value"][0] = "false"
    assert post(client, SMOKE, first).status_code == 200
    after_first = tree.read(FILE)
    second["a0.arguments.value"][0] = "form-4"
    stale = post(client, SMOKE, second)
    assert stale.status_code == 409 and "problem-reports.yaml changed since" in stale.text
    assert tree.read(FILE) == after_first


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_the_expected_action_editor_in_a_browser(browser, stored, tree, width):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.goto(f"{base}{SMOKE}")
        editor_fits = await fits(page)
        await page.fill("[aria-label='action 1 new arguments field']", "description")
        await page.select_option("[aria-label='action 1 new arguments form']", "contains")
        await page.fill("[aria-label='action 1 new arguments value']", "smoke")
        await screenshot(page, f"workspace-expected-actions-{width}")
        await page.click("button:text('Save')")
        diff = await page.inner_text("pre.diff")
        saved_fits = await fits(page)
        await page.goto(f"{base}{SMOKE}")
        await page.select_option("#f-a0\\.tool", "update_ticket")
        async with page.expect_response(lambda r: r.request.method == "POST") as posted:
            await page.click("button:text('Save')")
        status = (await posted.value).status
        said = await page.inner_text("main")
        refused_fits = await fits(page)
        await screenshot(page, f"workspace-expected-action-conflict-{width}")
        problems = [p for p in page.problems  # type: ignore[attr-defined]
                    if "status of 422" not in p]  # the refused save itself
    assert "+      arguments: {slug: trotec-speedy-400, description_contains: smoke}" in diff
    assert status == 422 and "'update_ticket' is not a tool offered here" in said
    assert "Review its expected actions" in said
    assert "description_contains: smoke" in tree.read(FILE)  # the refused save wrote nothing
    assert "update_ticket" not in tree.read(FILE)
    assert editor_fits and saved_fits and refused_fits and problems == []
