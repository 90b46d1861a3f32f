"""Online evaluation on conversations made through the real /api/chat: consented turns only,
checked and stored by reference, a turn checked once per harness, and a prompt change that
breaks a check flagged in the trend per agent (and per week), with its failing turns."""

import datetime as dt
import json
from pathlib import Path

import httpx
import psycopg
import pytest
from pydantic import SecretStr

from app.manuals.blobs import serve_blob_store
from app.settings import Settings, get_settings
from app.web import create_app
from evals.api.online import _sample, read_trend
from evals.record.store import RunStore
from tests.evals.cli.helpers import change_fragment
from tests.fakes import ScriptedModel, say

HONEST = "I can propose closing that ticket: press Confirm on the card to close it."
CLAIMS = "Done! I've closed the ticket for you."


async def talk(db, settings, answer: str, turns: int, consent: bool | None) -> None:
    app = create_app(Settings(**{**settings.model_dump(), "session_secret": None}), db=db,
                     model=ScriptedModel(say(answer), repeat=True))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        if consent is not None:
            await client.post("/api/consent", json={"consent": consent})
        conversation = None
        for n in range(turns):
            r = await client.post("/api/chat", json={
                "message": f"please close the plywood ticket ({n})",
                **({"conversation_id": conversation} if conversation else {})})
            assert r.status_code == 200, r.text
            conversation = r.json()["conversation_id"]


@pytest.fixture
def eval_settings_of(db, settings):
    return settings.model_copy(update={"database_url": SecretStr(db.conninfo)})


async def test_a_prompt_change_that_breaks_a_check_is_flagged(db, settings, eval_settings_of,
                                                               monkeypatch):
    await talk(db, settings, HONEST, 12, consent=True)
    await talk(db, settings, CLAIMS, 4, consent=None)  # never consented: never read
    await talk(db, settings, CLAIMS, 3, consent=False)
    with pytest.MonkeyPatch.context() as deployed:
        change_fragment(deployed, text="Say a change is done.")
        await talk(db, settings, CLAIMS, 12, consent=True)

    first = await _sample(eval_settings_of, 10, None)
    assert (first.consented, first.checked, first.already) == (24, 10, 0)
    rest = await _sample(eval_settings_of, None, None)
    assert (rest.checked, rest.already) == (14, 10)  # a turn is checked once per harness
    again = await _sample(eval_settings_of, None, None)
    assert again.checked == 0 and again.verdicts == []

    shown = await read_trend(db.conninfo)
    claimed = [r for r in shown.by_agent if r.kind == "not_claimed_done"]
    assert [(r.decided, r.failed) for r in claimed] == [(12, 0), (12, 12)]
    (flag,) = [r for r in shown.flagged if r.kind == "not_claimed_done" and r.group
               == claimed[1].group]
    assert "failure rate up from 0%" in flag.why and "to 100%" in flag.why
    assert "no run-to-run noise for this check" in flag.why  # no stored suite runs here
    assert len(flag.failing) == 12  # the turns to draft cases of
    from evals.report.online_trend import render_trend

    assert "from-conversations --turns " + ",".join(map(str, flag.failing)) in render_trend(
        shown.by_agent, shown.noise)
    by_kind = {r.kind: r for r in shown.by_week}
    assert "citations_resolve" not in by_kind  # no answer cites a manual: nothing to resolve
    assert by_kind["no_unknown_tools"].decided == 24  # each turn's own catalogue
    # The store keeps the turn's reference and the verdict, never its text.
    async with await psycopg.AsyncConnection.connect(db.conninfo) as conn:
        cur = await conn.execute("SELECT * FROM eval_online_verdicts")
        rows = await cur.fetchall()
    assert len(rows) == 24 * 5
    assert not any("ticket" in str(value) and "closed" in str(value)
                   for row in rows for value in row)


async def test_a_turn_stored_without_its_catalogue_is_undecided_where_it_reads_one(
        db, settings, eval_settings_of):
    await talk(db, settings, CLAIMS + " The Glowforge Pro is free now.", 1, consent=True)
    await db.execute("UPDATE turns SET catalog_version = NULL")
    done = await _sample(eval_settings_of, None, None)
    said = {v.kind: (v.verdict, v.why) for v in done.verdicts}
    assert said["no_unknown_tools"] == ("undecided", "the turn was stored without the"
                                        " catalogue it was answered with")
    # A check that reads no catalogue decides as ever: a claim is a claim.
    assert said["not_claimed_done"] == ("fail", "")
    async with RunStore.open(db.conninfo) as store:  # as the evals role: not even asked
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await store.db.execute("DELETE FROM eval_online_verdicts")
        assert await store.online_verdicts(dt.datetime(2100, 1, 1, tzinfo=dt.UTC)) == []
    async with await psycopg.AsyncConnection.connect(db.conninfo) as owner:  # the triggers
        with pytest.raises(psycopg.errors.RestrictViolation, match="evidence kept"):
            await owner.execute("DELETE FROM eval_online_verdicts")


async def test_a_flagged_turn_becomes_a_draft_case_under_the_consent_rules(db, settings,
                                                                           eval_settings_of):
    from evals.authoring.from_conversations import make_cases

    await talk(db, settings, CLAIMS, 2, consent=True)
    await talk(db, settings, CLAIMS, 1, consent=False)
    await _sample(eval_settings_of, None, None)
    rows = await db.fetch("SELECT t.id, cc.consent FROM turns t JOIN conversation_consent cc"
                          " ON cc.conversation_id = t.conversation_id ORDER BY t.id")
    yes = [r["id"] for r in rows if r["consent"]]
    no = [r["id"] for r in rows if not r["consent"]]
    made = await make_cases(db, 10, flagged={yes[1]: ["not_claimed_done"],
                                             no[0]: ["not_claimed_done"]})
    [(kind, case)] = made.cases
    assert kind == "flagged" and case["assert"] == [{"kind": "not_claimed_done"}]
    assert case["history"]  # the earlier turn of its conversation
    assert [line for line in made.left_out if f"turn {no[0]}:" in line]


PDF = Path(__file__).parents[3] / "evals" / "fixtures" / "manuals" / "form-4-manual.pdf"


async def test_a_cited_manual_is_fetched_from_the_apps_store_and_a_silent_store_decides_nothing(
        db, settings, eval_settings_of, tmp_path, monkeypatch):
    """A turn citing a page its search found: the page is fetched from the app's manual store
    over HTTP (PASS); with the store down, the same turn is UNDECIDED, never FAIL."""
    (tmp_path / "blobs" / "manuals").mkdir(parents=True)
    (tmp_path / "blobs" / "manuals" / "form-4.pdf").write_bytes(PDF.read_bytes())
    page = "Wear nitrile gloves when handling resin and wash any spill with isopropyl alcohol."
    with serve_blob_store(tmp_path / "blobs") as blobs:
        url = f"{blobs.base_url}/manuals/form-4.pdf#page=1"
        answer = (f"Wear nitrile gloves when handling resin [Form 4 manual, p. 1]({url}).")
        await talk(db, settings, answer, 1, consent=True)
        await db.execute(
            "INSERT INTO manuals (machine_id, title, blob_key, sha256, page_count, has_text)"
            " SELECT id, 'Form 4 manual', 'manuals/form-4.pdf', 'x', 10, true FROM machines"
            " WHERE slug = 'form-4'")
        await db.execute("INSERT INTO manual_pages (manual_id, page, text) SELECT id, 1, %s"
                         " FROM manuals WHERE blob_key = 'manuals/form-4.pdf'", (page,))
        await db.execute("UPDATE turns SET tool_calls = %s", (json.dumps([{
            "name": "search_manual", "arguments": {"query": "resin gloves"}, "outcome": "ok",
            "result": {"passages": [{"ref": "p1", "url": url, "page": 1,
                                     "title": "Form 4 manual", "text": page}]}}]),))
        monkeypatch.setenv("BLOB_BASE_URL", blobs.base_url)
        monkeypatch.setenv("BLOB_DIR", str(tmp_path / "blobs"))
        get_settings.cache_clear()
        said = {v.kind: v for v in (await _sample(eval_settings_of, None, None)).verdicts}
    assert said["citations_resolve"].verdict == "pass"
    # The store is down now: the same turn, under another harness, decides nothing.
    import evals.api.online as online

    monkeypatch.setattr(online, "harness_hash", lambda: "another")
    again = {v.kind: v for v in (await _sample(eval_settings_of, None, None)).verdicts}
    get_settings.cache_clear()
    assert (again["citations_resolve"].verdict, again["citations_resolve"].why) == (
        "undecided", "a cited document could not be fetched from the app's manual store")


async def test_a_turn_the_checks_cannot_read_is_undecided_and_never_stops_the_sampler(
        db, settings, eval_settings_of):
    await talk(db, settings, CLAIMS, 2, consent=True)
    first = await db.fetchone("SELECT min(id) AS id FROM turns")
    await db.execute("UPDATE turns SET tool_calls = %s WHERE id = %s",
                     (json.dumps([{"name": "x", "kind": 5}]), first["id"]))
    done = await _sample(eval_settings_of, None, None)
    assert (done.checked, done.unreadable) == (2, 1)
    bad = [v for v in done.verdicts if v.turn_id == first["id"]]
    assert {v.verdict for v in bad} == {"undecided"}
    assert bad[0].why == ("the stored turn cannot be read as the checks read a turn"
                          " (ValidationError)")
    good = {v.kind: v.verdict for v in done.verdicts if v.turn_id != first["id"]}
    assert good["not_claimed_done"] == "fail"
    assert (await _sample(eval_settings_of, None, None)).checked == 0  # gone past it
