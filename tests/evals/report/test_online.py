"""A recorded turn as the online checks read it: leniently where its stored shape is older
than today's record, and an old call's failure read from its error."""

import datetime as dt

from evals.report.online import fixtures_of, live_turn, transcript_of

AT = dt.datetime(2026, 11, 23, 9, tzinfo=dt.UTC)


def test_a_stored_turn_is_read_leniently_and_an_old_call_keeps_its_failure():
    row = {"id": 1, "conversation_id": "c", "created_at": AT, "model": "m",
           "messages": {"all": 5, "user": "hi"}, "answer": "ok",
           "tool_calls": [{"name": "get_machine", "error": "unknown_tool"}, "junk"],
           "audience": None, "page_path": "/",
           "machines": [{"slug": "form-4", "name": "Form 4", "brand": "Formlabs",
                         "category": "3D printer", "aliases": [],
                         "specs": {"build_volume": "14.5 x 14.5 x 18.5 cm", "gone": "x"}},
                        {"slug": "a"}, "x"]}
    turn = live_turn(row)
    assert turn.said == (("user", "hi"),) and len(turn.tool_calls) == 1
    # Stored before calls carried an outcome: its error says what happened, not "ok".
    assert transcript_of(turn).tool_calls[0].status == "unknown_tool"
    fixtures = fixtures_of(turn)
    assert fixtures is not None and [m.slug for m in fixtures.machines] == ["form-4"]
    assert fixtures.machines[0].specs == {"build_volume": "14.5 x 14.5 x 18.5 cm"}
