"""People's labels of judged verdicts in the run store: both people's labels kept and their
disagreement counted (also when they answer at once), a person's label kept once, a label the
store cannot hold refused with nothing written, and what the queue has to offer."""

import asyncio
import datetime as dt
import re

import psycopg
import pytest

from evals.record.labels import (
    Label,
    LabelError,
    Offered,
    add_labels,
    labels_of,
    list_labels,
    offered,
    people_say,
    queue,
)
from tests.evals.record.helpers import judged_run, stored


def label(item: str, verdict: str, by: str, **kw) -> Label:
    return Label(run=kw.pop("run", "lab0001"), item=item, repetition=1, attempt=1,
                 check=kw.pop("check", 2), kind=kw.pop("kind", "judge"), verdict=verdict,
                 by=by, **kw)


async def test_two_people_are_both_kept_and_their_disagreement_counted(store):
    await stored(store, judged_run("lab0001", ["pass", "fail", "pass"]))
    assert await add_labels(store, [label("case-0", "pass", "ana"),
                                    label("case-0", "fail", "ben", note="it lectures"),
                                    label("case-1", "fail", "ana"),
                                    label("case-1", "fail", "ben"),
                                    label("case-2", "skip", "ana")]) == 5
    kept = await list_labels(store)
    assert [(x.item, x.by, x.verdict) for x in kept] == [
        ("case-0", "ana", "pass"), ("case-0", "ben", "fail"), ("case-1", "ana", "fail"),
        ("case-1", "ben", "fail"), ("case-2", "ana", "skip")]
    assert all(x.at is not None for x in kept) and kept[1].note == "it lectures"
    said = people_say(kept)
    assert list(said.disagreed) == [("lab0001", "case-0", 1, 1, 2)]
    assert said.agreed == {("lab0001", "case-1", 1, 1, 2): "fail"}
    assert said.only_skipped == [("lab0001", "case-2", 1, 1, 2)] and said.several == 2


async def test_a_person_labels_a_verdict_once(store):
    await stored(store, judged_run("lab0001", ["pass", "fail"]))
    assert await add_labels(store, [label("case-0", "pass", "ana")]) == 1
    assert await add_labels(store, [label("case-0", "pass", "ana")]) == 0  # not twice
    with pytest.raises(LabelError, match="ana labelled lab0001/case-0 .* already, as pass"):
        await add_labels(store, [label("case-1", "fail", "ana"),
                                 label("case-0", "fail", "ana")])
    assert [(x.item, x.verdict) for x in await list_labels(store)] == [("case-0", "pass")]


async def test_a_label_of_a_run_or_check_not_stored_writes_nothing(store):
    await stored(store, judged_run("lab0001", ["pass"]))
    with pytest.raises(LabelError) as caught:
        await add_labels(store, [label("case-0", "pass", "ana"),
                                 label("case-0", "pass", "ana", run="gone0001"),
                                 label("case-0", "pass", "ben", check=1, kind="no_unknown_tools"),
                                 label("case-0", "pass", "cy", kind="criterion (required): x")])
    assert [i for i, _ in caught.value.problems] == [1, 2, 3]
    assert "no stored run 'gone0001' (deleted, or never stored)" in str(caught.value)
    assert "has no judged check 1 (no_unknown_tools)" in str(caught.value)
    assert await list_labels(store) == []


async def test_the_queue_holds_what_this_person_has_not_labelled(store):
    await stored(store, judged_run("lab0001", ["pass", "fail"]))
    await add_labels(store, [label("case-0", "pass", "ana")])
    assert [j.ref.item for j in await queue(store, "ana")] == ["case-1"]
    assert [j.ref.item for j in await queue(store, "ben")] == ["case-0", "case-1"]
    item = (await queue(store, "ana"))[0]
    assert item.ref.check == 2 and item.check.judge.verdict == "fail"


def test_a_label_needs_a_verdict_and_a_name():
    with pytest.raises(ValueError, match="verdict"):
        label("case-0", "maybe", "ana")
    with pytest.raises(ValueError, match="by"):
        label("case-0", "pass", "")


@pytest.mark.parametrize(("field", "text"), [("by", "ana\x07"), ("note", "NUL\x00"),
                                             ("item", "case\x1b")])
def test_a_label_holds_plain_text_only(field, text):
    fields = {"item": "case-0", "by": "ana", "note": "", field: text}
    with pytest.raises(ValueError, match=f"control character U\\+00{ord(text[-1]):02X}:"
                                         " plain text only"):
        label(fields.pop("item"), "pass", fields.pop("by"), **fields)
    tab = {"note": "first\tsecond"}  # a tab is plain text
    assert label("case-0", "pass", "ana", **tab).note == "first\tsecond"


async def test_two_people_labelling_one_verdict_at_once_are_both_kept(store):
    await stored(store, judged_run("lab0001", ["pass"]))
    written = await asyncio.gather(add_labels(store, [label("case-0", "pass", "ana")]),
                                   add_labels(store, [label("case-0", "fail", "ben")]))
    assert written == [1, 1]  # not last write wins
    kept = await list_labels(store)
    assert [(x.by, x.verdict) for x in kept] == [("ana", "pass"), ("ben", "fail")]
    said = people_say(kept)
    assert list(said.disagreed) == [("lab0001", "case-0", 1, 1, 2)] and said.several == 1
    assert said.agreed == {}


async def test_one_person_answering_one_verdict_twice_at_once_keeps_one(store):
    await stored(store, judged_run("lab0001", ["pass"]))
    got = await asyncio.gather(add_labels(store, [label("case-0", "pass", "ana")]),
                               add_labels(store, [label("case-0", "fail", "ana")]),
                               return_exceptions=True)
    assert sorted(type(g).__name__ for g in got) == ["LabelError", "int"]
    assert len(await list_labels(store)) == 1


async def test_what_the_newest_runs_offer_to_label(store):
    assert await offered(store) == Offered(verdicts=0, unasked=0)
    await stored(store, judged_run("lab0001", ["pass", "fail", "pass"], asked=False))
    assert await offered(store) == Offered(verdicts=0, unasked=3)
    assert await queue(store, "ana") == []
    await stored(store, judged_run("lab0002", ["pass"]))
    assert await offered(store) == Offered(verdicts=1, unasked=3)


@pytest.mark.parametrize("field", ["repetition", "attempt", "check"])
def test_a_place_past_the_store_s_integers_is_refused_before_any_query(field):
    from pydantic import ValidationError

    from evals.record.labels import Label

    fields = {"run": "r", "item": "i", "repetition": 1, "attempt": 1, "check": 1,
              "kind": "judge", "verdict": "pass", "by": "ana"}
    with pytest.raises(ValidationError, match="less than or equal to 2147483647"):
        Label(**{**fields, field: 3_000_000_000})


async def test_a_label_keeps_the_pack_rubric_it_was_given_under(store):
    # A label of a pack's verdict given with the pack's rubric in view says so; one given
    # under the case's own rubric (as every label stored before this was recorded) says none.
    await stored(store, judged_run("lab0001", ["pass", "fail"], prompt_hash="hp",
                                   pack="safety/kind"))
    await add_labels(store, [label("case-0", "pass", "ana", rubric_pack="safety/kind",
                                   rubric_hash="hp"), label("case-1", "fail", "ana")])
    kept = await list_labels(store)
    assert [(x.rubric_pack, x.rubric_hash) for x in kept] == [("safety/kind", "hp"),
                                                             (None, None)]
    assert kept[0].under_pack("safety/kind", "hp") and not kept[1].under_pack("safety/kind",
                                                                              "hp")
    # the same label again is the same; under another rubric it is another answer
    assert await add_labels(store, [label("case-0", "pass", "ana", rubric_pack="safety/kind",
                                          rubric_hash="hp")]) == 0
    with pytest.raises(LabelError, match="labelled lab0001/case-1 .* already"):
        await add_labels(store, [label("case-1", "fail", "ana", rubric_pack="safety/kind",
                                       rubric_hash="hp")])
    # an exported label without a pack's rubric reads as it did before
    assert "rubric_pack" not in kept[1].model_dump() and \
        kept[0].model_dump()["rubric_pack"] == "safety/kind"


def test_a_pack_rubric_is_named_with_its_prompt_hash_or_not_at_all():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="rubric_pack and rubric_hash are given together"):
        label("case-0", "pass", "ana", rubric_pack="safety/kind")
    with pytest.raises(ValidationError, match="rubric_pack and rubric_hash are given together"):
        label("case-0", "pass", "ana", rubric_hash="hp")


def test_a_name_is_normalised_so_one_person_is_one_name():
    assert label("case-0", "pass", "Ａｎａ").by == "Ana"  # fullwidth letters (NFKC)
    assert label("case-0", "pass", "  Ana   Lima ").by == "Ana Lima"
    assert label("case-0", "pass", "Ana\u0301").by == "Aná"  # composed
    assert label("case-0", "pass", "Анна").by == "Анна"  # one script, any script
    assert label("case-0", "pass", "山田 はなこ").by == "山田 はなこ"  # Han with kana


@pytest.mark.parametrize(("name", "letter"), [
    ("\u0410na", "U+0410 CYRILLIC CAPITAL LETTER A"),  # А, Cyrillic, then Latin
    ("An\u0430", "U+0430 CYRILLIC SMALL LETTER A"),
    ("\u0391na", "U+0391 GREEK CAPITAL LETTER ALPHA"),
])
def test_a_name_mixing_scripts_is_refused(name, letter):
    with pytest.raises(ValueError, match=f"mixes scripts .*{re.escape(letter)}.*one script"):
        label("case-0", "pass", name)


def test_a_label_s_time_is_within_the_project_s_life():
    now = dt.datetime.now(dt.UTC)
    assert label("case-0", "pass", "ana", at=now).at == now
    assert label("case-0", "pass", "ana", at=now + dt.timedelta(minutes=2)).at is not None
    with pytest.raises(ValueError, match="is in the future"):
        label("case-0", "pass", "ana", at=now + dt.timedelta(days=1))
    with pytest.raises(ValueError, match="1999-01-01.* is before 2026-11-29, when this"
                                         " project began"):
        label("case-0", "pass", "ana", at=dt.datetime(1999, 1, 1, tzinfo=dt.UTC))
    with pytest.raises(ValueError, match="has no time zone"):
        label("case-0", "pass", "ana", at=dt.datetime(2026, 12, 1, 9, 0))


async def test_people_are_found_by_their_name_as_normalised(store):
    await stored(store, judged_run("lab0001", ["pass"]))
    assert await add_labels(store, [label("case-0", "pass", "Ａｎａ")]) == 1
    assert [x.by for x in await list_labels(store, "Ａｎａ")] == ["Ana"]
    assert await queue(store, "Ａｎａ") == []  # labelled already, whichever way it is typed


async def test_a_label_stored_before_these_checks_is_still_read(store):
    """A name or a time the checks now refuse, stored before they were made, is read back as
    stored: the store's evidence is never unreadable."""
    await stored(store, judged_run("lab0001", ["pass"]))
    async with await psycopg.AsyncConnection.connect(store.db.conninfo, autocommit=True) as c:
        await c.execute("INSERT INTO eval_labels (run_id, case_id, repetition, attempt, n, kind,"
                        " verdict, labelled_by, labelled_at) VALUES ('lab0001', 'case-0', 1, 1,"
                        " 2, 'judge', 'pass', %s, '2020-01-01T00:00:00Z')", ("\u0430na",))
    [kept] = await list_labels(store)
    assert (kept.by, kept.at.year) == ("\u0430na", 2020)
    assert [x.by for x in await labels_of(store, kept.ref())] == ["\u0430na"]
