"""The workspace's guard through Starlette's test client: the token opens it once and sets its
cookie, nothing is shown or changed without that cookie, and a form is taken only from the
workspace's own pages (the tabs: test_overview, test_results, test_tests_tab, test_groups,
test_forms)."""

import pytest
from starlette.testclient import TestClient

from evals.workspace import create_workspace
from tests.evals.workspace.helpers import BASE, TOKEN, Recording, form_of


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


@pytest.mark.parametrize("path", ["/results?run=ws%00", "/comparisons/x%00", "/runs/x%00",
                                  "/labels?by=a%00b", "/tests?q=%1b"])
def test_an_address_with_a_control_character_is_refused_not_a_crash(client, path):
    refused = client.get(path)
    assert refused.status_code == 400 and "control character" in refused.text


def test_a_form_without_its_length_is_refused_before_it_is_read(client, tree):
    before = tree.read("cases/honest-absence.yaml")

    def chunked():  # a body of no stated length: it could be any size
        yield b"group=absence"

    refused = client.post("/tests/case/no-glowforge", content=chunked(),
                          headers={"origin": BASE,
                                   "content-type": "application/x-www-form-urlencoded"})
    assert refused.status_code == 411 and tree.read("cases/honest-absence.yaml") == before


def test_a_tab_in_a_search_is_no_control_character(client):
    # a tab pasted into the search box or a labeller's name is text, as in a file or a label
    assert client.get("/tests?q=a%09b").status_code == 200
    assert client.get("/labels?by=ana%09b").status_code == 200
