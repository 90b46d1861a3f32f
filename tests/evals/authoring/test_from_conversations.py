"""Cases from stored conversations: deterministic, fair across kinds and people, only with
consent, contact details scrubbed, history cut as documented, checks from the kind."""

import datetime as dt
import json
import uuid
from collections import Counter

import pytest

from evals.authoring.from_conversations import NoConversations, _loads, make_cases, scrub

T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)


class Records:
    def __init__(self, db):
        self.db = db
        self.n = 0

    async def conversation(self, person: str, consent: bool | None) -> str:
        cid = str(uuid.uuid4())
        await self.db.execute("INSERT INTO conversations (id, user_ref) VALUES (%s, %s)",
                              (cid, person))
        if consent is not None:
            await self.db.execute(
                "INSERT INTO research_consent (user_ref, consent) VALUES (%s, %s)"
                " ON CONFLICT (user_ref) DO UPDATE SET consent = EXCLUDED.consent",
                (person, consent))
        return cid

    async def turn(self, cid: str, user: str, answer: str = "ok", calls=(), *,
                   page="/", audience="anonymous", photo: str | None = None) -> None:
        self.n += 1
        content = user if not photo else [
            {"type": "text", "text": f"{user}\n\n[Attached photos: attachment_id={photo}"
                                     " name=p.jpg]"},
            {"type": "image_url", "image_url": "[photo]"}]
        messages = {"user": user, "all": [{"role": "user", "content": content}]}
        await self.db.execute(
            "INSERT INTO turns (conversation_id, model, messages, answer, tool_calls, usage,"
            " latency_ms, page_path, audience, created_at) VALUES"
            " (%s, 'm', %s, %s, %s, '{}', 1, %s, %s, %s)",
            (cid, json.dumps(messages), answer, json.dumps(list(calls)), page, audience,
             T0 + dt.timedelta(minutes=self.n)))


def jpeg_with_gps() -> bytes:
    import io

    from PIL import Image

    image = Image.new("RGB", (8, 8), "red")
    exif = Image.Exif()
    exif[0x8825] = {2: (51.0, 30.0, 0.0)}  # GPS latitude
    out = io.BytesIO()
    image.save(out, "PNG", exif=exif)
    return out.getvalue()


def failed(name="get_unit_status"):
    return {"name": name, "arguments": {}, "result": {"error": "x"}, "outcome": "error"}


def no_machine():
    return {"name": "search_catalog", "arguments": {"query": "glowforge"},
            "result": {"machines": [], "note": ""}, "outcome": "ok"}


@pytest.fixture
async def records(db):
    r = Records(db)
    talkative = await r.conversation("u_talkative", True)
    for i in range(6):  # one person with many failed tool calls
        await r.turn(talkative, f"is unit {i} free?", calls=[failed()])
    quiet = await r.conversation("u_quiet", True)
    await r.turn(quiet, "is the form 4 free? mail me at ann@example.org or +44 20 7946 0958",
                 calls=[failed()])
    await r.turn(quiet, "no, that's wrong, I meant the other one", "Sorry!")
    await r.turn(quiet, "book the glowforge", calls=[no_machine()], page="/tools/form-4",
                 audience="student")
    staff = await r.conversation("u_staff", True)
    await r.turn(staff, "close the plywood ticket", calls=[
        {"name": "update_ticket", "arguments": {}, "result": {}, "outcome": "ok"}],
        page="/staff/tickets", audience="staff")
    long = await r.conversation("u_long", True)
    for i in range(8):
        await r.turn(long, f"question {i} " + "x" * 5000, f"answer {i}")
    await r.turn(long, "actually, that is not what I asked")
    secret = await r.conversation("u_no_consent", None)
    await r.turn(secret, "no, wrong", calls=[failed(), no_machine()])
    refused = await r.conversation("u_refused", False)
    await r.turn(refused, "book the glowforge", calls=[no_machine()])
    return r


async def test_the_same_records_give_the_same_cases_fairly(records, db):
    first = await make_cases(db, 6)
    assert all(_loads(case, first.photos) is None for _, case in first.cases)
    again = await make_cases(db, 6)
    assert first.cases == again.cases
    kinds = [k for k, _ in first.cases]
    # one kind at a time in the fixed order, then round again; no photo in the records
    assert kinds == ["tool-error", "correction", "missing-machine", "staff-action",
                     "tool-error", "correction"]
    tool_errors = [c for k, c in first.cases if k == "tool-error"]
    assert tool_errors[0]["prompt"] == "is unit 0 free?"  # the talkative person first...
    assert tool_errors[1]["prompt"].startswith("is the form 4 free?")  # ...then the other one
    assert "kind photo: none in the consented conversations" in " ".join(first.left_out)
    cut = await make_cases(db, 1)  # a kind cut by --count is not reported as absent
    assert not any("correction: none" in x for x in cut.left_out)


async def test_only_consented_conversations_are_used(records, db):
    made = await make_cases(db, 50)
    prompts = [c["prompt"] for _, c in made.cases]
    assert "no, wrong" not in prompts and len(prompts) == len(set(prompts))
    assert sum(p == "book the glowforge" for p in prompts) == 1  # the consented one only
    assert "2 conversation(s) whose person has not consented" in made.left_out


async def test_contact_details_are_replaced_and_counted(records, db):
    made = await make_cases(db, 50)
    quiet = next(c for _, c in made.cases if c["prompt"].startswith("is the form 4"))
    assert quiet["prompt"] == "is the form 4 free? mail me at [email] or [phone]"
    assert made.scrubbed["email"] >= 1 and made.scrubbed["phone"] >= 1
    text = json.dumps([c for _, c in made.cases])
    assert "ann@example.org" not in text and "7946" not in text


async def test_history_checks_and_context_come_from_the_records_never_the_words(records, db):
    made = await make_cases(db, 50)
    by_prompt = {c["prompt"]: (k, c) for k, c in made.cases}
    kind, long = by_prompt["actually, that is not what I asked"]
    assert kind == "correction" and len(long["history"]) == 11
    assert list(long["history"][0]) == ["assistant"]  # the last 11 messages
    assert all(len(next(iter(m.values()))) <= 4000 for m in long["history"])
    assert long["rubric"].startswith("Takes the person's correction into account")
    kind, glowforge = by_prompt["book the glowforge"]
    assert glowforge["context"] == {"page": "tool", "toolId": "form-4", "as": "student"}
    assert glowforge["assert"] == [{"kind": "no_unknown_tools"}]
    assert "glowforge" not in glowforge["rubric"].lower()
    kind, staff = by_prompt["close the plywood ticket"]
    assert kind == "staff-action" and staff["context"] == {"path": "/staff/tickets",
                                                           "as": "staff"}
    assert staff["assert"] == [{"kind": "proposed_action", "value": "update_ticket"}]


async def test_a_photo_turn_brings_its_photo_without_its_metadata(db):
    import io

    from PIL import Image

    r = Records(db)
    photo, other = str(uuid.uuid4()), str(uuid.uuid4())
    for pid in (photo, other):
        await db.execute("INSERT INTO attachments (id, name, content_type, data, created_at)"
                         " VALUES (%s, 'p.png', 'image/png', %s, %s)",
                         (pid, jpeg_with_gps(), T0))
    cid = await r.conversation("u_photo", True)
    await r.turn(cid, "what is this machine?", photo=photo)
    # someone typing another upload's id names no photo: only the chat's own hint does
    await r.turn(cid, f"and [Attached photos: attachment_id={other} name=x.jpg]")
    made = await make_cases(db, 5)
    (kind, case), = made.cases
    assert kind == "photo" and case["photos"] == ["conversation-1-0.jpg"]
    data = made.photos["conversation-1-0.jpg"]
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "JPEG" and not image.getexif()  # no GPS, no EXIF at all


async def test_people_are_taken_one_at_a_time_within_a_kind(db):
    r = Records(db)
    for person, n in (("u_a", 5), ("u_b", 1), ("u_c", 1)):
        cid = await r.conversation(person, True)
        for i in range(n):
            await r.turn(cid, f"{person} {i}", calls=[failed()])
    made = await make_cases(db, 4)
    assert [c["prompt"] for _, c in made.cases] == ["u_a 0", "u_b 0", "u_c 0", "u_a 1"]


async def test_names_and_contact_details_go_but_dates_and_sizes_stay(db):
    counts = Counter()
    text = ("Alex Kim (alex) said call 020 7946 0958 or +44 7700 900123 on 2026-11-01 at"
            " 10:30; cut 0.05 - 0.3 mm; SuperMaker helped")
    out = scrub(text, counts, ["Alex Kim", "alex", "Alex", "Kim"])
    assert out == ("[name] ([name]) said call [phone] or [phone] on 2026-11-01 at 10:30; cut"
                   " 0.05 - 0.3 mm; SuperMaker helped")
    assert counts == Counter(name=2, phone=2)
    r = Records(db)
    cid = await r.conversation("u_alex", True)
    await r.turn(cid, "is unit 2 free?", "Sure, Alex Kim: unit 2 is free.", calls=[failed()])
    await r.turn(cid, "no, wrong: I am alex and I meant unit 3")
    made = await make_cases(db, 5)
    text = json.dumps([c for _, c in made.cases])
    assert "Alex" not in text and "alex" not in text and made.scrubbed["name"] >= 2


async def test_turns_stored_before_pages_were_recorded_are_left_out(db):
    r = Records(db)
    cid = await r.conversation("u_old", True)
    await r.turn(cid, "is it free?", calls=[failed()], audience=None)
    made = await make_cases(db, 5)
    assert made.cases == []
    assert any("stored before turns recorded their page" in x for x in made.left_out)


async def test_nothing_stored_or_nothing_consented_is_a_clear_message(db):
    with pytest.raises(NoConversations, match="no stored conversations"):
        await make_cases(db, 5)
    r = Records(db)
    cid = await r.conversation("u_x", None)
    await r.turn(cid, "hello")
    with pytest.raises(NoConversations, match="no stored conversation has its person's"
                                              " consent"):
        await make_cases(db, 5)
    with pytest.raises(NoConversations, match="since 2030-01-01"):
        await make_cases(db, 5, dt.datetime(2030, 1, 1, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def detectors_loaded():
    """spaCy and Presidio load once for the module's tests that scrub free text (a few s)."""
    scrub("Warm-up from Jordan Rivera.", Counter())


def test_numbers_in_any_format_addresses_and_names_go_and_machines_stay(detectors_loaded):
    counts = Counter()
    text = ("Hi, this is Morgan Lee. Text 555 867 5309 or 617-555-0199 (or (617) 555-0142),"
            " I live at 12 Elm Street. My teammate Ahmed Hassan asked about the Form 4 in"
            " Room 204, ticket #12 and ticket 3, the Trotec Speedy 400 and the Prusa MK4 on"
            " 2026-12-01 at 10:30: part RS-F2-GPWH-04, 600 x 400 mm.")
    assert scrub(text, counts) == (
        "Hi, this is [name]. Text [phone] or [phone] (or [phone]), I live at [address]. My"
        " teammate [name] asked about the Form 4 in Room 204, ticket #12 and ticket 3, the"
        " Trotec Speedy 400 and the Prusa MK4 on 2026-12-01 at 10:30: part RS-F2-GPWH-04,"
        " 600 x 400 mm.")
    assert counts == Counter(name=2, phone=3, address=1)


async def test_the_summary_names_what_the_detectors_cannot_rule_out(records, db,
                                                                     detectors_loaded):
    made = await make_cases(db, 3)
    assert set(made.unsure) == {"name", "address", "phone", "email", "student_id"}
    assert "lower-case" in made.unsure["name"] and "another language" in made.unsure["name"]


async def test_a_tool_calls_arguments_are_written_scrubbed(db, detectors_loaded):
    r = Records(db)
    cid = await r.conversation("u_reporter", True)
    await r.turn(cid, "the resin tank on the form 4 is cracked", calls=[
        {"name": "report_issue", "outcome": "error", "result": {"error": "x"},
         "arguments": {"machine": "form-4", "reporter": "dana whitfield",
                       "details": "tank cracked, call 617-555-0199"}}])
    made = await make_cases(db, 5)
    [(kind, case)] = made.cases
    [call] = made.calls[case["id"]]
    assert kind == "tool-error" and "dana" not in call and "617" not in call
    assert json.loads(call.removeprefix("report_issue ")) == {
        "machine": "form-4", "reporter": "[name]", "details": "tank cracked, call [phone]"}
    assert made.scrubbed == {"name": 1, "phone": 1}


async def test_a_name_cue_no_detector_resolved_holds_the_case_back(db, detectors_loaded):
    r = Records(db)
    cid = await r.conversation("u_cue", True)
    await r.turn(cid, "is unit 3 free?", calls=[failed()])
    other = await r.conversation("u_other", True)
    await r.turn(other, "is unit 4 free? my name is 4real btw", calls=[failed()])
    made = await make_cases(db, 5)
    assert [case["prompt"] for _, case in made.cases] == ["is unit 3 free?"]
    [held] = made.held_back
    assert "“my name is”" in held and "no detector resolved it" in held
    assert made.scrubbed == {}  # nothing counted for a case that was not written
