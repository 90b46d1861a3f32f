"""The workspace's routes through Starlette's test client: the token and its cookie, the
tabs, and every write rule (stale revision, invalid edit, group conflicts, cancel)."""

import re

import pytest
from starlette.testclient import TestClient

from evals.workspace import create_workspace
from tests.evals.workspace.helpers import BASE, TOKEN, Recording, form_of, post, unescape


def test_nothing_is_shown_or_changed_without_the_token_and_its_cookie(stored, tree):
    app = create_workspace(stored, TOKEN, sources=tree, launcher=Recording())
    before = tree.read("cases/honest-absence.yaml")
    with TestClient(app, base_url=BASE) as anyone:
        for path in ("/", "/results", "/tests", "/runs/ws0001run", "/static/workspace.js"):
            assert anyone.get(path).status_code == 403, path
        assert anyone.post("/tests/group", data={"pick": "no-glowforge"}).status_code == 403
        assert anyone.post("/launch", data={"mode": "quick"}).status_code == 403
        assert anyone.get("/?token=guess").status_code == 403
        assert anyone.get("/?token=%C3%A9").status_code == 403  # not a 500
        anyone.cookies.set("workspace", "forged")
        assert anyone.get("/").status_code == 403
    with TestClient(app, base_url=BASE, follow_redirects=False) as owner:
        opened = owner.get(f"/?token={TOKEN}")
        cookie = opened.headers["set-cookie"].lower()
        assert opened.status_code == 303 and owner.get("/").status_code == 200
    with TestClient(app, base_url=BASE) as later:
        assert later.get(f"/?token={TOKEN}").status_code == 403  # the token opens it once
    with TestClient(app, base_url="http://evil.example") as rebound:
        assert rebound.get(f"/?token={TOKEN}").status_code == 400  # another Host: refused
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert tree.read("cases/honest-absence.yaml") == before


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},
    {"origin": "http://127.0.0.1:9999"},  # another local server: same site, not same origin
    {"origin": "null"},
    {"origin": "null", "sec-fetch-site": "same-origin"},
    {"sec-fetch-site": "same-site"},
    {"sec-fetch-site": "cross-site"},
])
def test_a_form_from_anywhere_but_the_workspace_is_refused(client, tree, headers):
    fields = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    fields["prompt"] = ["changed"]
    before = tree.read("cases/honest-absence.yaml")
    refused = client.post("/tests/case/no-glowforge", data=fields, headers=headers)
    assert refused.status_code == 403 and tree.read("cases/honest-absence.yaml") == before


def test_a_form_from_the_workspace_itself_is_taken(client, tree):
    fields = form_of(client.get("/tests/case/no-glowforge").text, "/tests/case/no-glowforge")
    fields["group"] = ["absence"]
    taken = client.post("/tests/case/no-glowforge", data=fields,
                        headers={"origin": BASE, "sec-fetch-site": "same-origin"})
    assert taken.status_code == 200 and "group: absence" in tree.read(
        "cases/honest-absence.yaml")


def test_saving_an_unchanged_form_writes_nothing(client, tree):
    before = {n: tree.read(n) for n in tree.files()}
    for action in ("/tests/case/student-in-distress", "/tests/scenario/anonymous-smoke-report",
                   "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"):
        saved = post(client, action, form_of(client.get(action).text, action))
        assert saved.status_code == 200 and "No change" in saved.text, action
    shared = form_of(client.get("/tests/shared").text, "/tests/shared")
    assert "No change" in post(client, "/tests/shared", shared).text
    assert {n: tree.read(n) for n in tree.files()} == before


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
    assert missing.status_code == 404
    assert "no-glowforge" in tests.text and "anonymous-smoke-report" in tests.text
    assert "script-src 'self'" in tests.headers["content-security-policy"]


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
    assert after.startswith("# Saying \"we don't have that\".\n- id: no-glowforge\n")
    assert "    Says plainly that the lab has no Glowforge.\n    Offers the Trotec.\n" in after


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
    assert tree.read(name).endswith(before.split("\n", 4)[4])  # the second one untouched


def test_frozen_responses_as_a_typed_form_and_as_raw_json(client, tree):
    name = "scenarios/curation.yaml"
    action = "/tests/scenario/web-page-with-frozen-answer/responses?tool=read_page"
    page = client.get(action).text
    typed = form_of(page, action)
    assert typed["r0.url"] == ["https://formlabs.example/form-4/tech-specs"]
    typed["r1.error"] = ["timed out"]
    assert post(client, action, typed).status_code == 200
    assert "- error: timed out" in tree.read(name)
    raw_page = client.get(action).text
    start = raw_page.index('name="mode" value="raw"')
    raw = form_of(raw_page[start - 400:], action)
    raw["raw"] = ["[{\"url\": 3}]"]
    before = tree.read(name)
    refused = post(client, action, raw)
    assert refused.status_code == 422 and "does not fit the result schema" in unescape(refused.text)
    raw["raw"] = ["not json"]
    assert post(client, action, raw).status_code == 422 and tree.read(name) == before


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


def test_a_run_is_reviewed_with_its_count_before_it_starts(client):
    asked = {"mode": "full", "ids": "no-glowforge, glowforge-under-pressure", "repeat": "3",
             "kinds": "both"}
    review = client.post("/launch", data=asked)
    assert review.status_code == 200
    assert "1 cases + 2 scenario conversations × 3 repetition(s) = 9 conversations" \
        in review.text
    unknown = client.post("/launch", data={**asked, "ids": "no-such-case"})
    assert unknown.status_code == 422 and "unknown 'no-such-case'" in unescape(unknown.text)
    too_many = client.post("/launch", data={**asked, "repeat": "11"})
    assert too_many.status_code == 422 and "repetitions: 1 to 10" in too_many.text
    bad_point = client.post("/launch", data={**asked, "save_point": "../x"})
    assert bad_point.status_code == 422
    missing = client.post("/launch", data={**asked, "compare": "1", "point": "nope"})
    assert missing.status_code == 422 and "no comparison point 'nope'" in unescape(missing.text)
    nothing = client.post("/launch/stop", data={"job": "nope"})
    assert nothing.status_code == 409


def test_a_confirmed_run_starts_what_was_reviewed(client, launcher):
    asked = {"mode": "quick", "names": ["safety-and-care"], "groups": ["safety and care"],
             "kinds": "cases", "repeat": "2", "save_point": "before-change"}
    review = client.post("/launch", data=asked)
    kept = form_of(review.text, "/launch")
    assert kept["confirm"] == ["1"] and launcher.asked == []  # reviewing starts nothing
    started = client.post("/launch", data=kept)
    assert started.url.path == "/results"
    (request, title), = launcher.asked
    assert request.argv() == ["run", "--quick", "--repeat=2", "--cases=safety-and-care",
                              "--group=safety and care", "--cases-only"]
    assert request.point_argv() == ["point", "save", "--repeat=2", "--cases=safety-and-care",
                                    "--group=safety and care", "--", "before-change"]
    assert title == ("quick run of safety-and-care, group safety and care (cases only),"
                     " saved first as point before-change")


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
