"""A transcript's tool calls: whether each really ran (from its outcome, or an older record's
error code), its arguments and result as mappings, and every value as the JSON the record
keeps."""

import datetime as dt

import pytest

from evals.record.transcript import OUTCOMES, ToolCall, Transcript, Turn, as_json


@pytest.mark.parametrize(("outcome", "error", "status"), [
    ("ok", None, "ok"),
    ("unknown_tool", None, "unknown_tool"),
    ("invalid_arguments", "tool_error", "invalid_arguments"),  # the outcome, when recorded
    (None, None, "ok"),  # recorded before calls carried an outcome: from the error code
    (None, "bad_json", "invalid_arguments"),
    (None, "bad_args", "invalid_arguments"),
    (None, "unknown_tool", "unknown_tool"),
    (None, "tool_error", "error"),
    (None, "something new", "error"),
])
def test_a_calls_status_is_its_outcome_or_read_from_its_error(outcome, error, status):
    call = ToolCall(name="search_catalog", outcome=outcome, error=error)
    assert call.status == status and call.status in OUTCOMES


def test_arguments_and_result_as_mappings_or_empty():
    call = ToolCall(name="update_ticket", arguments={"ticket_id": 1},
                    result={"proposed": True})
    assert call.args == {"ticket_id": 1} and call.result_map == {"proposed": True}
    odd = ToolCall(name="update_ticket", arguments="{not json", result=["a", "list"])
    assert odd.args == {} and odd.result_map == {}
    assert ToolCall(name="list_open_tickets").args == {}


def test_a_value_becomes_the_json_the_record_keeps():
    when = dt.datetime(2026, 11, 30, 9, 30, tzinfo=dt.UTC)
    value = {"due": dt.date(2026, 12, 1), "events": [{"at": when, "n": 2}], "name": "Trotec"}
    assert as_json(value) == {"due": "2026-12-01",
                              "events": [{"at": "2026-11-30 09:30:00+00:00", "n": 2}],
                              "name": "Trotec"}
    assert as_json("Café") == "Café" and as_json(None) is None


def test_calls_of_a_tool_and_the_ones_that_ran():
    ran = ToolCall(name="report_issue", outcome="ok")
    refused = ToolCall(name="report_issue", outcome="invalid_arguments")
    old_error = ToolCall(name="report_issue", error="tool_error")
    other = ToolCall(name="search_catalog", outcome="ok")
    transcript = Transcript(tool_calls=[ran, refused, other, old_error])
    assert transcript.calls("report_issue") == [ran, refused, old_error]
    assert transcript.ran("report_issue") == [ran]
    assert transcript.calls("read_page") == [] and transcript.ran("read_page") == []


def test_what_the_model_was_sent_is_never_stored():
    transcript = Transcript(answer="hi", messages=[{"role": "system", "content": "long"}])
    assert transcript.messages and "messages" not in transcript.model_dump()
    assert "long" not in transcript.model_dump_json()


def _talk(*turns):
    return [Turn(role=r, content=c, photos=list(p)) for r, c, *p in turns]


def test_the_answer_to_the_photos_is_the_one_after_the_message_that_carried_them():
    turns = _talk(("user", "hi"), ("assistant", "Hello."),
                  ("user", "what is this?", "IMG_2041.jpg"), ("assistant", "The Form 4."),
                  ("user", "thanks"), ("assistant", "You are welcome."))
    assert Transcript(answer="You are welcome.", turns=turns).photo_answer() == "The Form 4."
    # no message carried photos (a case: its turns are not kept): the final answer
    assert Transcript(answer="The Form 4.").photo_answer() == "The Form 4."
    unanswered = turns[:3]  # ended on the photo message: nothing answered it
    assert Transcript(answer="Hello.", turns=unanswered).photo_answer() == ""


def test_a_turn_without_photos_is_read_from_a_record_written_before_they_existed():
    assert Turn.model_validate({"role": "user", "content": "hi"}).photos == []
