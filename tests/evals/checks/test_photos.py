import pytest

from evals.checks import CHECKS
from evals.fixtures.catalog import fixtures_for
from evals.record.transcript import ToolCall, Transcript, Turn
from tests.evals.checks.helpers import call, check


def intake(*items):
    return [call("identify_tools", {"attachment_id": "a", "items": list(items)},
                 {"recorded": True}, "write")]


BENCH = intake({"brand": "WEN", "name": "drill press", "quantity": 1},
               {"brand": "Cricut", "name": "Maker 3", "quantity": 1},
               {"brand": "Ryobi", "name": "P103 battery", "quantity": 2})


def test_identified_items_alternatives_and_quantities():
    assert check("identified_items", calls=BENCH,
                 value=["drill press", "cricut|maker", "battery|p103 x2"])[0]
    passed, reason = check("identified_items", calls=BENCH, value=["battery x3"])
    assert not passed and "Ryobi P103 battery x2" in reason


def test_identified_items_needs_a_different_item_per_entry():
    one = intake({"brand": "Cricut", "name": "Maker", "quantity": 1})
    assert not check("identified_items", calls=one, value=["cricut", "maker"])[0]
    assert not check("identified_items", calls=[], value=["cricut"])[0]


@pytest.mark.parametrize(("value", "passed"), [("3", True), ("2-4", True), ("4", False)])
def test_identified_count(value, passed):
    assert check("identified_count", calls=BENCH, value=value)[0] is passed


@pytest.mark.parametrize(("answer", "value", "passed"), [
    ("That's the **Form 4**, our resin printer.", "form-4", True),
    ("This looks like the [Form 4](/tools/form-4).", "form-4", True),
    ("This is the Ultimaker 3 Extended.", "ultimaker-3-extended|ask", True),
    ("This is the Ultimaker 3.", "ultimaker-3-extended|ask", False),
    ("It could be the Ultimaker 3 or the Ultimaker 3 Extended; which one is it?",
     "ultimaker-3-extended|ask", True),
    ("It's a Form 3, not the Form 4.", "form-4", False),
])
def test_identified_tool_first_machine_named(answer, value, passed):
    assert check("identified_tool", answer, catalog="lab", value=value)[0] is passed


def test_identified_tool_none():
    assert check("identified_tool", "That looks like a Glowforge; the lab doesn't have one.",
                 catalog="lab", value="none")[0]
    passed, reason = check("identified_tool", "This is the Trotec Speedy 400.", catalog="lab",
                           value="none")
    assert not passed and "claims Trotec Speedy 400 is pictured" in reason


@pytest.mark.parametrize(("answer", "value", "passed"), [
    ("Not the Form 4: this is the Trotec Speedy 400.", "trotec-speedy-400", True),
    ("It isn't the Ultimaker 3; it's the taller Ultimaker 3 Extended.",
     "ultimaker-3-extended", True),
    ("Probably the Form 3, from the orange lid.", "form-3", True),
    ("Probably the Form 3, from the orange lid.", "form-4|ask", False),
    ("I can't tell: it could be either the Ultimaker 3 or the Ultimaker 3 Extended.",
     "ultimaker-3", False),
    ("It looks like a Speedy 360; our Trotec Speedy 400 is similar.", "trotec-speedy-400",
     False),
])
def test_identified_tool_uses_the_machine_said_to_be_pictured(answer, value, passed):
    assert check("identified_tool", answer, catalog="lab", value=value)[0] is passed


def conversation(*turns, calls=()):
    """A scenario's transcript: the messages (a user message may name its photos), the final
    answer, the tool calls of every turn."""
    talk = [Turn(role=r, content=c, photos=list(p)) for r, c, *p in turns]
    return Transcript(answer=talk[-1].content, turns=talk,
                      tool_calls=[ToolCall.model_validate(c) for c in calls])


def run(kind, transcript, **args):
    spec = CHECKS[kind]
    return spec.check(transcript, spec.args.model_validate(args), fixtures_for("lab"))


def test_in_a_conversation_identified_tool_reads_the_answer_to_the_photo():
    asked = conversation(
        ("user", "hi, quick question"), ("assistant", "Sure, go ahead."),
        ("user", "can I use this one this afternoon?", "IMG_2057.jpg"),
        ("assistant", "It could be the Ultimaker 3 or the Ultimaker 3 Extended; which is it?"),
        ("user", "the tall one"), ("assistant", "Then it is the Ultimaker 3 Extended."),
        ("user", "thanks"), ("assistant", "You are welcome!"))
    assert run("identified_tool", asked, value="ultimaker-3-extended|ask")[0]
    # the answer to the photo asked: a plain claim was not made there, whatever came after
    passed, reason = run("identified_tool", asked, value="ultimaker-3-extended")
    assert not passed and "Ultimaker 3 first without saying it is pictured" in reason
    guessed = conversation(("user", "what is this?", "IMG_2057.jpg"),
                           ("assistant", "That's the Ultimaker 3."),
                           ("user", "are you sure?"),
                           ("assistant", "Sorry, it is the Ultimaker 3 Extended."))
    assert not run("identified_tool", guessed, value="ultimaker-3-extended|ask")[0]


def test_in_a_conversation_the_intake_checks_read_the_identify_tools_call_that_ran():
    talk = conversation(("user", "add this bench to the inventory", "bench-three-tools.jpg"),
                        ("assistant", "Recorded three items."), ("user", "thanks"),
                        ("assistant", "Anything else?"), calls=BENCH)
    assert run("identified_count", talk, value="3")[0]
    assert run("identified_items", talk, value=["drill press", "cricut|maker", "battery"])[0]
    nothing = conversation(("user", "add this", "bench-three-tools.jpg"),
                           ("assistant", "Which items?"))
    assert run("identified_count", nothing, value="3") == (False,
                                                           "identify_tools was never called")
