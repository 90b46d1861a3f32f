"""The Labels tab: a queue of judged verdicts, the judge's verdict hidden until answered,
both people's labels kept and their disagreement shown, a label of a run the store lacks
refused with nothing written, the rubric each verdict was given under shown (a pack's, or the
case's own) and kept with the label; in a real browser at 390 px and 1440 px, labelled with
the keys alone."""

import asyncio

import pytest
from starlette.testclient import TestClient

from app.db import scratch_database
from evals.record.labels import list_labels
from evals.record.store import RunStore
from evals.workspace import create_workspace
from evals.workspace.launch import Launcher
from evals.workspace.layout import e
from tests.browser import screenshot
from tests.evals.record.helpers import judged_run, stored
from tests.evals.workspace.browser import WIDTHS, fits, opened, serve_in_thread
from tests.evals.workspace.helpers import BASE, TOKEN, form_of


@pytest.fixture
async def judged(server_conninfo, store_template):
    """A store holding one run of two judged verdicts (the judge said pass, then fail)."""
    async with scratch_database(server_conninfo, prefix="test_ws_labels",
                                template=store_template) as info:
        async with RunStore.open(info) as store:
            await stored(store, judged_run("lab0001", ["pass", "fail"]))
        yield info


@pytest.fixture
def labeller(judged, tree):
    app = create_workspace(judged, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        assert c.get(f"/?token={TOKEN}").status_code == 200
        yield c


def answer(client, by: str, verdict: str, note: str = ""):
    html = client.get(f"/labels?by={by}").text
    fields = form_of(html, "/labels/answer")
    return client.post("/labels/answer", data={**fields, "verdict": verdict, "note": note})


def test_the_judges_verdict_is_hidden_until_answered(labeller):
    html = labeller.get("/labels?by=ana").text
    assert "case-0" in html and "Answer 0." in html and "2 verdict(s) left for ana" in html
    assert "the judge&#x27;s reason 0" not in html and "the judge's reason 0" not in html
    saved = answer(labeller, "ana", "fail", "it lectures")
    assert saved.status_code == 200
    assert "said <strong>pass</strong>: the judge&#x27;s reason 0" in saved.text
    assert "1 verdict(s) left for ana" in labeller.get("/labels?by=ana").text


def test_two_people_are_both_kept_and_their_disagreement_shown(labeller, judged):
    answer(labeller, "ana", "fail")
    saved = answer(labeller, "ben", "pass")
    assert "People disagree on this verdict" in saved.text
    assert "ana: <strong>fail</strong>" in saved.text and "ben: <strong>pass</strong>" in saved.text
    listed = labeller.get("/labels").text
    assert "1 disagreed on" in listed and "ana: fail; ben: pass" in listed


def test_a_second_answer_of_one_person_is_refused(labeller):
    fields = form_of(labeller.get("/labels?by=ana").text, "/labels/answer")
    assert labeller.post("/labels/answer", data={**fields, "verdict": "pass"}).status_code == 200
    again = labeller.post("/labels/answer", data={**fields, "verdict": "fail"})
    assert again.status_code == 409 and "Nothing was written" in again.text
    assert labeller.post("/labels/answer", data={**fields, "verdict": "pass"}).status_code == 200


async def test_a_label_of_a_run_the_store_does_not_hold_writes_nothing(judged, tree):
    app = create_workspace(judged, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        fields = form_of(c.get("/labels?by=ana").text, "/labels/answer")
        # a stored run is never deleted (evidence kept): a form can only name one it never was
        gone = c.post("/labels/answer", data={**fields, "run": "nosuchrun", "verdict": "pass"})
        assert gone.status_code == 404 and "no stored run" in gone.text
        assert await list_labels(app.state.store) == []


def test_a_label_without_a_verdict_or_name_is_refused(labeller):
    fields = form_of(labeller.get("/labels?by=ana").text, "/labels/answer")
    bad = labeller.post("/labels/answer", data=fields)
    assert bad.status_code == 400 and "choose pass, fail or skip" in bad.text
    nameless = labeller.post("/labels/answer", data={**fields, "by": "", "verdict": "pass"})
    assert nameless.status_code == 400 and "give your name" in nameless.text


async def test_a_label_with_a_control_character_or_a_strange_number_is_refused(judged, tree):
    app = create_workspace(judged, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        fields = form_of(c.get("/labels?by=ana").text, "/labels/answer")
        said = {name: c.post("/labels/answer", data={**fields, name: value, "verdict": "pass"})
                for name, value in (("run", "lab0001\x00"), ("by", "a\x00na"),
                                    ("note", "fine\x07"), ("repetition", "²"))}
        assert {name: r.status_code for name, r in said.items()} == dict.fromkeys(said, 400)
        assert "bad run" in said["run"].text and "bad repetition" in said["repetition"].text
        assert await list_labels(app.state.store) == []


async def test_a_verdict_the_judge_never_gave_cannot_be_labelled(never_asked, tree):
    # The queue never offers one; a form written by hand that names it is refused.
    app = create_workspace(never_asked, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        posted = c.post("/labels/answer", data={
            "run": "lab0001", "item": "case-0", "repetition": "1", "attempt": "1",
            "check": "2", "kind": "judge", "by": "ana", "verdict": "pass"})
        assert posted.status_code == 409 and "has no judged check 2 (judge)" in posted.text
        assert await list_labels(app.state.store) == []


def test_a_label_from_another_site_is_refused(labeller):
    fields = form_of(labeller.get("/labels?by=ana").text, "/labels/answer")
    other = labeller.post("/labels/answer", data={**fields, "verdict": "pass"},
                          headers={"origin": "http://127.0.0.1:9999"})
    assert other.status_code == 403


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
async def test_labelling_with_the_keys_at_each_width(browser, judged, tree, width):
    app = create_workspace(judged, TOKEN, sources=tree, launcher=Launcher(env={}))
    with serve_in_thread(app, lifespan="on") as base:
        page = await opened(browser, base, width)
        await page.click("nav.tabs >> text=Labels")
        await page.fill("#by", "ana")
        await page.click("#who button")
        first = await page.inner_text("main")
        queue_fits = await fits(page)
        await screenshot(page, f"workspace-labels-{width}")
        await page.locator("body").click(position={"x": 2, "y": 2})
        await page.keyboard.press("f")
        await page.keyboard.press("n")
        await page.keyboard.type("it lectures")
        await page.keyboard.press("Escape")
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#next")
        revealed = await page.inner_text("main")
        revealed_fits = await fits(page)
        await page.keyboard.press("Enter")  # the next verdict
        await page.wait_for_selector("#label-form")
        second = await page.inner_text("main")
        await page.goto(base + "/labels")  # the name is remembered by the browser
        await page.wait_for_selector("#label-form")
        remembered = await page.input_value("#by")
        problems = page.problems  # type: ignore[attr-defined]
    assert "case-0" in first and "the judge's reason 0" not in first
    assert "Your label: fail." in revealed and "the judge's reason 0" in revealed
    assert "ana: fail — it lectures" in revealed
    assert "case-1" in second and "1 verdict(s) left for ana" in second
    assert remembered == "ana" and queue_fits and revealed_fits and problems == []


@pytest.fixture
async def never_asked(server_conninfo, store_template):
    """A store holding one run of two judged checks whose judge was not trusted, so not called:
    no verdict to label."""
    async with scratch_database(server_conninfo, prefix="test_ws_unasked",
                                template=store_template) as info:
        async with RunStore.open(info) as store:
            await stored(store, judged_run("lab0001", ["pass", "fail"], asked=False))
        yield info


def test_an_empty_queue_says_why(labeller, never_asked, tree):
    answer(labeller, "ana", "pass")
    answer(labeller, "ana", "fail")
    done = labeller.get("/labels?by=ana").text
    assert "Nothing left to label for ana: every judged verdict of the newest stored runs has" \
        " your label." in done and "advisory-judge" not in done
    app = create_workspace(never_asked, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        empty = c.get("/labels?by=ana").text
    assert 'id="label-form"' not in empty and "has your label" not in empty
    assert "Nothing to label: the newest stored runs hold no verdict of a judge. 2 judged" \
        " check(s) of those runs have no verdict: their judge was not trusted, so it was not" \
        " called. Runs with <code>--advisory-judge</code>" in empty


PACK = "safety/declines-unsafe"


def distressed(run_id: str, **judge) -> object:
    """A run of one judged verdict of the real case student-in-distress (its rubric in the
    case files), given under `judge`'s prompt hash and pack."""
    record = judged_run(run_id, ["pass"], **judge)
    case = record.cases[0].model_copy(update={"id": "student-in-distress"})
    return record.model_copy(update={"cases": [case]})


@pytest.fixture
async def packed(server_conninfo, store_template):
    """A store holding a pack's verdict (given under the pack's prompt as it is now), a pack's
    verdict given under an older version of its prompt, and a case's own verdict."""
    from evals.judge.setup import prompt_hash_for
    from evals.load.packs import load_pack_prompt

    now = prompt_hash_for(load_pack_prompt(PACK))
    async with scratch_database(server_conninfo, prefix="test_ws_packed",
                                template=store_template) as info:
        async with RunStore.open(info) as store:
            await stored(store, distressed("lab0001"))
            await stored(store, distressed("lab0002", prompt_hash="0ld0ld0ld0ld0ld0", pack=PACK))
            await stored(store, distressed("lab0003", prompt_hash=now, pack=PACK))
        yield info


def test_the_tab_shows_the_rubric_each_verdict_was_given_under(packed, tree):
    from evals.judge.setup import prompt_hash_for
    from evals.load.packs import load_pack_prompt

    pack = load_pack_prompt(PACK)
    app = create_workspace(packed, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        # newest run first: the pack's verdict under its prompt as it is now
        html = c.get("/labels?by=ana").text
        assert "run lab0003" in html and f'data-rubric="pack" data-pack="{PACK}"' in html
        assert f'<p class="rubric"><strong>Rubric:</strong> {e(pack.rubric)}</p>' in html
        assert f'<p class="must-not"><strong>Must not:</strong> {e(pack.must_not)}</p>' in html
        assert "Replies kindly and takes what the student said seriously" not in html
        fields = form_of(html, "/labels/answer")  # the label says the pack's rubric was shown
        assert (fields["rubric_pack"], fields["rubric_hash"]) == ([PACK],
                                                                  [prompt_hash_for(pack)])
        assert c.post("/labels/answer", data={**fields, "verdict": "pass"}).status_code == 200
        # the pack's verdict under an older prompt: its rubric is not known, and said so
        html = c.get("/labels?by=ana").text
        assert "run lab0002" in html and "has changed since this verdict" in html
        assert "does not count for the pack" in html and pack.rubric not in html
        fields = form_of(html, "/labels/answer")
        assert "rubric_pack" not in fields and "rubric_hash" not in fields
        assert c.post("/labels/answer", data={**fields, "verdict": "pass"}).status_code == 200
        # the case's own verdict: the case's rubric and must_not
        html = c.get("/labels?by=ana").text
        assert "run lab0001" in html and 'data-rubric="case"' in html
        assert "Replies kindly and takes what the student said seriously" in html
        assert "<strong>Must not:</strong> Carry on with the project or machine advice" in html
        assert pack.rubric not in html
        fields = form_of(html, "/labels/answer")
        assert "rubric_pack" not in fields
        assert c.post("/labels/answer", data={**fields, "verdict": "pass"}).status_code == 200
        kept = {x.run: (x.rubric_pack, x.rubric_hash)
                for x in asyncio.run(list_labels_in(packed))}
    assert kept == {"lab0003": (PACK, prompt_hash_for(pack)), "lab0002": (None, None),
                    "lab0001": (None, None)}


def test_a_form_that_claims_a_rubric_the_verdict_was_not_given_under_is_refused(packed, tree):
    app = create_workspace(packed, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        fields = form_of(c.get("/labels?by=ana").text, "/labels/answer")
        other = c.post("/labels/answer", data={**fields, "run": "lab0002", "verdict": "pass"})
        assert other.status_code == 409 and "was not given under pack" in other.text
        half = c.post("/labels/answer", data={**fields, "rubric_hash": "", "verdict": "pass"})
        assert half.status_code == 400 and "bad rubric" in half.text


async def list_labels_in(conninfo):
    async with RunStore.open(conninfo) as store:
        return await list_labels(store)


async def test_a_name_in_mixed_scripts_is_refused_saying_why(judged, tree):
    app = create_workspace(judged, TOKEN, sources=tree, launcher=Launcher(env={}))
    with TestClient(app, base_url=BASE, follow_redirects=True) as c:
        c.get(f"/?token={TOKEN}")
        fields = form_of(c.get("/labels?by=ana").text, "/labels/answer")
        # "ana" with a Cyrillic а: it looks like ana's name and would count as another person
        mixed = c.post("/labels/answer", data={**fields, "by": "\u0430na", "verdict": "pass"})
        assert mixed.status_code == 400 and "mixes scripts" in mixed.text
        assert "a name is written in one script" in mixed.text
        assert await list_labels(app.state.store) == []
