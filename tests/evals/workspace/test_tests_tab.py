"""The Tests tab: a case, a scenario's criteria and the shared criteria edited, the diff shown
and the rest of the file kept (and a criterion edited in a real browser); a cancelled form
writes nothing."""

import re

import pytest

from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.browser import opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, form_of, post, unescape


def test_editing_a_case_shows_the_diff_and_keeps_the_rest(client, tree):
    name = "cases/honest-absence.yaml"
    before = tree.read(name)
    fields = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    fields["prompt"] = ["Can I book the Glowforge for Friday?"]
    fields["rubric"] = ["Says plainly that the lab has no Glowforge.\r\nOffers the Trotec."]
    saved = post(client, "/tests/case/no-glowforge", fields)
    after = tree.read(name)
    assert saved.status_code == 200 and "+  rubric: |" in saved.text
    assert '+  prompt: "Can I book the Glowforge for Friday?"' in unescape(saved.text)
    head, rest = before.split("- id: no-cnc-router", 1)
    assert after.endswith("- id: no-cnc-router" + rest)  # later entries byte for byte
    assert after.startswith("# yaml-language-server: $schema=../schemas/case-file.schema.json\n"
                            "# Saying \"we don't have that\".\n# A student waits for these"
                            " answers: an attempt over two minutes fails (evals/load/limits.py)."
                            "\n- defaults: {max_latency_s: 120}\n\n- id: no-glowforge\n")
    assert "    Says plainly that the lab has no Glowforge.\n    Offers the Trotec.\n" in after


def test_cancelling_a_form_writes_nothing(client, tree):
    before = {n: tree.read(n) for n in tree.files()}
    page = client.get("/tests/scenario/anonymous-smoke-report").text
    cancel = re.search(r'<a class="button plain" href="([^"]+)">Cancel', page).group(1)
    assert client.get(cancel).status_code == 200
    assert {n: tree.read(n) for n in tree.files()} == before


def test_a_scenarios_criteria_edited_added_and_removed(client, tree):
    name = "scenarios/problem-reports.yaml"
    action = "/tests/scenario/anonymous-smoke-report"
    fields = form_of(client.get(action).text, action)
    assert fields["statement"][-1] == ""  # the empty "add a criterion" row
    fields["statement"][0] = "The assistant files the report without asking for a name first."
    fields["statement"][-1] = "The assistant thanks the visitor."
    fields["enforcement"][-1] = "informational"
    fields["remove"] = ["1"]
    saved = post(client, action, fields)
    text = tree.read(name)
    assert saved.status_code == 200
    assert "without asking for a name first." in text and "only after it was filed" not in text
    assert "- statement: The assistant thanks the visitor.\n      enforcement: informational" \
        in text
    listed = client.get("/tests").text
    add = form_of(listed, "/tests/scenario/student-reports-failed-prints/criteria")
    add.update(statement=["The assistant gives the ticket number."],
               enforcement=["required"])
    assert post(client, "/tests/scenario/student-reports-failed-prints/criteria",
                add).status_code == 200
    assert "- statement: The assistant gives the ticket number." in tree.read(name)


def test_shared_criteria_are_edited_on_their_own_tab(client, tree):
    name = "scenarios/criteria.yaml"
    page = client.get("/tests/shared").text
    fields = form_of(page, "/tests/shared")  # the first criterion's form
    before = tree.read(name)
    fields["applies_to"] = ["no-such-scenario"]
    refused = post(client, "/tests/shared", fields)
    assert refused.status_code == 422
    assert "unknown scenario 'no-such-scenario'" in unescape(refused.text)
    assert tree.read(name) == before
    fields["applies_to"] = ["anonymous-smoke-report, vague-plywood-cutting"]
    assert post(client, "/tests/shared", fields).status_code == 200
    assert "applies_to: [anonymous-smoke-report, vague-plywood-cutting]" in tree.read(name)
    assert tree.read(name).endswith(before.split("\n", 5)[5])  # the second one untouched


def test_a_control_character_in_a_one_line_field_is_refused(client, tree):
    # YAML writes it as an escape ("\\0"), which the file's text check alone never saw
    before = tree.read("cases/honest-absence.yaml")
    fields = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    fields["prompt"] = ["Glowforge\x00?"]
    refused = post(client, "/tests/case/no-glowforge", fields)
    assert refused.status_code == 422
    assert "control character U+0000 (written as an escape)" in unescape(refused.text)
    assert tree.read("cases/honest-absence.yaml") == before


def test_a_shared_criterion_numbered_strangely_is_refused(client, tree):
    before = tree.read("scenarios/criteria.yaml")
    fields = form_of(client.get("/tests/shared").text, "/tests/shared")
    fields["index"] = ["²"]  # str.isdigit says yes; int() would not
    refused = post(client, "/tests/shared", fields)
    assert refused.status_code == 400 and "which criterion?" in refused.text
    assert tree.read("scenarios/criteria.yaml") == before


@pytest.mark.slow
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
