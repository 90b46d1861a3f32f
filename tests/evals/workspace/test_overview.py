"""The Overview tab: a run reviewed with its count before it starts, then started as it was
reviewed, once: the confirmed form's idempotency key makes a second post of it return the run
it started, and refuses (409) the same key with another request."""

from tests.evals.workspace.helpers import form_of, unescape


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


def test_a_confirmed_run_posted_twice_starts_once_and_another_request_under_its_key_is_409(
        client, launcher):
    asked = {"mode": "quick", "ids": "no-glowforge", "kinds": "cases", "repeat": "1"}
    kept = form_of(client.post("/launch", data=asked).text, "/launch")
    [key] = kept["idempotency_key"]
    assert len(key) >= 20
    first = client.post("/launch", data=kept)
    again = client.post("/launch", data=kept)  # a double click, a reload, a retry
    assert first.url.path == again.url.path == "/results"
    assert len(launcher.asked) == 1
    other = client.post("/launch", data={**kept, "repeat": "2"})
    assert other.status_code == 409 and len(launcher.asked) == 1
    text = unescape(other.text)
    assert f"idempotency key '{key}' was used for another request" in text
    assert "repeat: 1 then, 2 now; nothing was started" in text
    bad = client.post("/launch", data={**kept, "idempotency_key": "short"})
    assert bad.status_code == 422 and "an idempotency key is 8 to 200" in unescape(bad.text)
    review = form_of(client.post("/launch", data=asked).text, "/launch")
    assert review["idempotency_key"] != [key]  # a new review is a new request
