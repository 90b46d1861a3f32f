"""The Overview tab: a run reviewed with its count before it starts, then started as it was
reviewed."""

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
