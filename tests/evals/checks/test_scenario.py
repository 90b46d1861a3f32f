"""The structural checks of a conversation: every turn answered, expected actions by their
selectors (their forms are tested in test_selectors.py), the end state the executor
counted."""

import pytest

from evals.checks import CHECKS
from evals.checks.scenario import EndState, ExpectAction
from evals.fixtures.catalog import fixtures_for
from evals.record.transcript import ToolCall, Transcript, Turn

FIXTURES = fixtures_for("demo")


def run(kind, transcript, args):
    return CHECKS[kind].check(transcript, args, FIXTURES)


def test_every_assistant_turn_must_have_words():
    said = [Turn(role="user", content="hi"), Turn(role="assistant", content="Hello.")]
    assert run("answered", Transcript(turns=said), None) == (True, "every turn answered")
    blank = [*said, Turn(role="user", content="?"), Turn(role="assistant", content=" ")]
    assert run("answered", Transcript(turns=blank), None) == (
        False, "no answer at message(s) [4]")
    assert run("answered", Transcript(), None) == (False, "no answer at message(s) the first")


def test_an_expected_action_needs_a_call_that_ran_and_fits_every_selector():
    want = ExpectAction(tool="report_issue", arguments={"slug": "form-4"},
                        result={"filed": True})
    ran = ToolCall(name="report_issue", arguments={"slug": "form-4"}, result={"filed": True},
                   outcome="ok")
    other = ran.model_copy(update={"arguments": {"slug": "trotec-speedy-400"}})
    refused = ran.model_copy(update={"outcome": "invalid_arguments"})
    assert run("expect_action", Transcript(tool_calls=[other, ran]), want)[0]
    assert run("expect_action", Transcript(tool_calls=[other]), want) == (
        False, "report_issue ran 1 time(s), none fits: slug is 'trotec-speedy-400', not"
               " 'form-4'")
    assert run("expect_action", Transcript(tool_calls=[refused]), want) == (
        False, "report_issue never ran successfully")
    assert CHECKS["expect_action"].label(want) == "expect_action report_issue {'slug': 'form-4'}"


def test_an_expected_action_takes_every_selector_form():
    ran = ToolCall(name="report_issue", outcome="ok", result={"filed": True},
                   arguments={"slug": "form-4", "title": "Tank grinding"})
    fits = ExpectAction(tool="report_issue", arguments={
        "slug_in": ["prusa-mk4", "form-4"], "title_matches": r"^tank", "title_contains": "GRIND"})
    assert run("expect_action", Transcript(tool_calls=[ran]), fits)[0]
    misses = ExpectAction(tool="report_issue", arguments={"title_matches": r"^grind"})
    assert run("expect_action", Transcript(tool_calls=[ran]), misses) == (
        False, "report_issue ran 1 time(s), none fits: title 'Tank grinding' does not match"
               " '^grind'")


def test_the_end_state_is_read_from_what_the_executor_counted():
    state = EndState(table="tickets", where={"status": "open"})
    gone = EndState(table="proposals", exists=False)
    counted = Transcript(end_state={state.describe(): 2, gone.describe(): 0})
    assert run("end_state", counted, state) == (True, "2 matching row(s) in tickets")
    assert run("end_state", counted, gone) == (True, "0 matching row(s) in proposals")
    with pytest.raises(ValueError, match="was not counted"):
        run("end_state", Transcript(), state)
    assert state.describe() == "end_state tickets {'status': 'open'} exists"
