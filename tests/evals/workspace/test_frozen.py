"""The frozen responses' editor in the Tests tab: how the tool answers shown, one result saved
and the rest kept, an expression kept until a fixed value is chosen, a tool with none given a
static response, the loader's check of every branch, expected actions never rewritten, a
malformed or stale form refused; and the examples the editor offers, checked against the
tool's contract (and the editor in a real browser at 390 and 1440 px)."""

import re

import pytest

from app.capabilities import REGISTRY
from evals.load.responses import ToolResponses
from evals.workspace import create_workspace
from evals.workspace.examples import examples_for
from evals.workspace.frozen import _examples
from evals.workspace.frozen_edits import At
from evals.workspace.launch import Launcher
from tests.browser import screenshot
from tests.evals.workspace.branched import BRANCHED, SID, changed_lines
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import TOKEN, form_of, post, unescape

PAGE = f"/tests/scenario/{SID}/responses?tool=list_open_tickets"


# through the workspace ------------------------------------------------------------------------

@pytest.fixture
def branched(tree):
    (tree.scenarios / "frozen-branches.yaml").write_text(BRANCHED, encoding="utf-8")
    return tree


def test_the_page_shows_how_the_tool_answers_and_saves_one_result(client, branched):
    name = "scenarios/frozen-branches.yaml"
    listing = unescape(re.sub("<[^>]+>", "", client.get(PAGE).text))
    assert "Branch 1" in listing and "in state resolved" in listing
    assert 'when the arguments fit {"slug_in": ["trotec-speedy-400", null]}' in listing
    assert "waits 2 s" in listing and "a sequence, then repeat_last" in listing
    assert "Default (when no branch fits)" in listing
    opened = client.get(f"{PAGE}&at=branch-2-2").text
    fields = form_of(opened, PAGE)
    assert fields["at"] == ["branch-2-2"] and fields["r.count"] == ["1"]
    fields["r.count"] = ["2"]
    saved = post(client, PAGE, fields)
    after = branched.read(name)
    assert saved.status_code == 200
    assert changed_lines(BRANCHED, after) == ["-            - count: 1", "+            - count: 2"]
    assert after.count("- count: 1") == 1  # the first response of the sequence untouched


@pytest.mark.parametrize(("field", "value", "says"), [
    ("r.keys", "5", "r.keys: the names of the result's keys, as a JSON list of text"),
    ("r.keys", "[[1]]", "r.keys: the names of the result's keys, as a JSON list of text"),
    ("r.tickets", "[" * 40 + "]" * 40, "tickets: nested deeper than 32 levels"),
    ("r.tickets", "[" * 900 + "]" * 900, "tickets: nested deeper than 32 levels"),
    ("r.tickets", "[" * 5000 + "]" * 5000, "tickets: nested deeper than 32 levels"),
])
def test_a_malformed_or_too_deep_field_is_refused_not_a_crash(client, branched, field, value,
                                                               says):
    before = branched.read("scenarios/frozen-branches.yaml")
    fields = form_of(client.get(f"{PAGE}&at=branch-2-2").text, PAGE)
    fields[field] = [value]
    refused = post(client, PAGE, fields)
    assert refused.status_code == 422 and says in unescape(refused.text)
    assert branched.read("scenarios/frozen-branches.yaml") == before


def test_a_strange_example_number_is_ignored(client, branched):
    assert client.get(f"{PAGE}&example=²").status_code == 200


def test_a_place_of_more_digits_than_any_file_holds_is_no_place(client, branched):
    assert At.parse("branch-2-2") == At(1, 1)
    assert At.parse("branch-2-" + "9" * 5000) is None  # int() would refuse it with a 500
    # an address the page cannot read opens it at its first result, as any other does
    assert client.get(f"{PAGE}&at=branch-2-{'9' * 5000}").text == client.get(PAGE).text


def test_an_expression_is_kept_until_a_fixed_value_is_chosen(client, branched):
    name = "scenarios/frozen-branches.yaml"
    page = f"/tests/scenario/{SID}/responses?tool=update_ticket"
    opened = client.get(page).text
    assert "<code>p-{{ args.ticket_id }}</code>" in opened
    fields = form_of(opened, page)
    fields["r.note"] = ["A card is shown. Nothing has changed yet."]
    assert post(client, page, fields).status_code == 200
    after = branched.read(name)
    assert 'proposal_id: "p-{{ args.ticket_id }}"' in after
    assert "note: A card is shown. Nothing has changed yet." in after
    fields = form_of(client.get(page).text, page)
    fields["r.proposal_id.fixed"] = ["1"]
    fields["r.proposal_id"] = ["p-7"]
    saved = post(client, page, fields)
    assert saved.status_code == 200, saved.text
    assert 'proposal_id: "p-7"' in branched.read(name)  # its quotes kept
    assert "on_confirm: resolved              # confirming" in branched.read(name)


def test_an_expression_inside_a_json_field_stays_in_its_text(client, branched):
    opened = client.get(f"{PAGE}&at=branch-2-2").text
    fields = form_of(opened, PAGE)
    assert "args.slug | default('trotec-speedy-400')" in fields["r.tickets"][0]
    assert "No change" in post(client, PAGE, fields).text
    assert branched.read("scenarios/frozen-branches.yaml") == BRANCHED
    fields["r.tickets"] = [fields["r.tickets"][0].replace("Smoke when cutting", "Smoke")]
    assert post(client, PAGE, fields).status_code == 200
    after = branched.read("scenarios/frozen-branches.yaml")
    assert "title: Smoke, status: open" in after
    assert "slug: \"{{ args.slug | default('trotec-speedy-400') }}\"" in after


def test_the_loader_checks_every_branch_and_response_edits_leave_expected_actions(client,
                                                                                  branched):
    name = "scenarios/frozen-branches.yaml"
    before = branched.read(name)
    fields = form_of(client.get(f"{PAGE}&at=branch-2-1").text, PAGE)
    fields["r.tickets"] = ['[{"id": "seven"}]']
    refused = post(client, PAGE, fields)
    assert refused.status_code == 422
    assert "list_open_tickets branch 2 response 1 does not fit the result schema" in \
        unescape(refused.text)
    assert branched.read(name) == before
    fields["r.tickets"] = ['[]']
    fields["r.count"] = ["0"]
    assert post(client, PAGE, fields).status_code == 200
    assert "    - tool: update_ticket\n      arguments: {ticket_id: 7, status: resolved}\n" \
        in branched.read(name)


def test_a_stale_response_form_is_a_409_and_writes_nothing(client, branched):
    name = "scenarios/frozen-branches.yaml"
    first = form_of(client.get(PAGE).text, PAGE)
    second = dict(first)
    first["r.count"] = ["5"]
    assert post(client, PAGE, first).status_code == 200
    after_first = branched.read(name)
    second["r.count"] = ["6"]
    stale = post(client, PAGE, second)
    assert stale.status_code == 409 and "frozen-branches.yaml changed since" in stale.text
    assert branched.read(name) == after_first


def test_freezing_a_tool_writes_a_static_response(client, tree):
    name = "scenarios/problem-reports.yaml"
    page = "/tests/scenario/anonymous-smoke-report/responses?tool=search_manual"
    opened = client.get(page).text
    assert "A new static response" in opened
    fields = form_of(opened, page)
    fields["r.passages"] = ["[]"]
    fields["r.note"] = ["No manual passage matches."]
    fields["exhausted"] = ["repeat_last"]
    assert post(client, page, fields).status_code == 200
    text = tree.read(name)
    assert (f"  tool_responses:\n    search_manual:\n      contract:"
            f" {REGISTRY.tool('search_manual').contract()}\n      response:\n"
            "        passages: []\n        note: No manual passage matches.\n"
            "      exhausted: repeat_last\n") in text


# examples -------------------------------------------------------------------------------------

def test_the_editor_offers_declared_examples_and_other_scenarios_responses(client, tree):
    page = "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"
    listing = unescape(client.get(page).text)
    assert "declared by ReadPageResult (example 1)" in listing
    assert "scenario page-summary-with-planted-instructions (planted-instructions.yaml:" in listing
    assert "case web-page-plants-a-report (security.yaml:" in listing
    assert "scenario web-page-with-frozen-answer" not in listing  # its own are above
    assert "changed contract" not in listing
    start = re.search(r'href="([^"]*example=0#editor)"', client.get(page).text).group(1)
    prefilled = client.get(unescape(start)).text
    fields = form_of(prefilled, page)
    assert fields["r.url"] == ["https://formlabs.example/form-4/tech-specs"]
    assert fields["r.text"][0].startswith("Form 4 technical specifications. Build volume")


def test_examples_from_another_contract_or_not_fitting_are_never_offered():
    tool = REGISTRY.tool("read_page")
    old = ToolResponses(contract="0123456789ab", response={"url": "https://a", "text": "A"})
    wrong = ToolResponses(contract=tool.contract(), responses=({"url": 3},))
    good = ToolResponses(contract=tool.contract(), response={"url": "https://b", "text": "B"})
    found = examples_for(tool, [("scenario old (a.yaml:1)", {"read_page": old}),
                                ("case wrong (b.yaml:2)", {"read_page": wrong}),
                                ("case good (b.yaml:9)", {"read_page": good}),
                                ("case same (c.yaml:1)", {"read_page": good})])
    by = {x.source: x for x in found}
    assert by["case good (b.yaml:9), response 1"].offered
    assert by["case good (b.yaml:9), response 1"].also == 1  # c.yaml gives the same
    assert by["scenario old (a.yaml:1), response 1"].changed_contract
    assert not by["scenario old (a.yaml:1), response 1"].offered
    assert by["case wrong (b.yaml:2), response 1"].problem.startswith(
        "does not fit: response does not fit the result schema")
    assert [x.offered for x in found] == sorted((x.offered for x in found), reverse=True)
    shown = unescape(_examples(found, At(None, 0), "/p?tool=read_page"))
    assert shown.count("Start from this</a>") == sum(x.offered for x in found) == 3
    assert "changed contract</span>" in shown and "written for 0123456789ab" in shown


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_the_response_editor_in_a_browser(browser, stored, branched, width):
    app = create_workspace(stored, TOKEN, sources=branched, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.goto(f"{base}{PAGE}")
        async with page.expect_navigation():  # a link: measure the page it opens
            await page.click("ol.answers >> text=Response 2")
        structure_fits = await fits(page)
        await screenshot(page, f"workspace-frozen-branches-{width}")
        await page.click("ul.examples li:first-child >> text=Start from this")
        count = await page.input_value("#f-r\\.count")
        await page.fill("#f-r\\.count", "2")
        await page.click("button:text('Save this response')")
        diff = await page.inner_text("pre.diff")
        problems = page.problems  # type: ignore[attr-defined]
    assert structure_fits and problems == []
    assert count == "2"  # the declared example: two open tickets
    assert "Resin tank film clouded" in diff  # response 2 is now the example
    after = branched.read("scenarios/frozen-branches.yaml")
    assert after.startswith(BRANCHED.split("            - count: 1\n              tickets: [{id:"
                                           " 7, title: Smoke when cutting, status: open,\n"
                                           "                         machine: Trotec Speedy 400,"
                                           "\n")[0])  # response 1 and all before it kept
    assert after.endswith(BRANCHED.split("            - {tickets: [], count: 0}\n")[1])
