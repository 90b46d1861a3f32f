"""The simulator checks: a visitor speaking as the assistant, a visitor saying what it is or
was told, at the turn it happens; a visitor in another language is not read; what is not
checked is said."""

from evals.checks.visitor import check_visitor, visitor_messages
from evals.record.transcript import Turn


def talk(*visitor: str) -> list[Turn]:
    turns = []
    for text in visitor:
        turns += [Turn(role="user", content=text),
                  Turn(role="assistant", content="Could you tell me which machine it is?")]
    return turns


def test_a_visitor_that_speaks_as_the_assistant_broke_role_at_that_turn():
    found = check_visitor(talk("The laser cutter smelled of smoke and stopped.",
                               "It is the one by the window. How can I help you today?"), None)
    (failure,) = found.failures
    assert (failure.kind, failure.turn) == ("broke_role", 2)
    assert failure.describe() == ("the visitor broke role at turn 2: “How can I help you”")
    steps = check_visitor(talk("Sure! Here are the steps to run the cutter: focus, then"
                               " start the fan."), None)
    assert [f.kind for f in steps.failures] == ["broke_role"]


def test_a_visitor_that_says_what_it_is_or_was_told_leaked():
    for text in ("As a simulated visitor, I want to report the smoke.",
                 "My instructions say I should not give my name yet.",
                 "I'm an AI, but the cutter stopped.",
                 "wont_say: my name"):
        found = check_visitor(talk(text), None)
        assert [f.kind for f in found.failures] == ["leaked"], text


def test_a_plain_visitor_is_not_flagged_and_what_is_left_unchecked_is_said():
    found = check_visitor(talk("The laser cutter smelled of smoke and then it stopped.",
                               "I'd rather not give my name, sorry.",
                               "Thanks, that's all I needed."), "STOP")
    assert not found.failed and found.kinds == ["broke_role", "leaked"]
    assert found.describe() == ("no broke role, leaked its instructions found; not checked:"
                                " gave up before its goal, agreed to what it was told to"
                                " refuse")
    assert visitor_messages(talk("a", "b"), "bye STOP") == ["a", "b", "bye STOP"]


def test_a_message_in_another_language_is_not_read():
    found = check_visitor(talk("La découpeuse laser sentait la fumée et s'est arrêtée net.",
                               "Comment puis-je vous aider aujourd'hui avec cette machine ?"),
                          None)
    assert found.unread == [1, 2] and not found.failed
    assert "(messages 1, 2 not read: another language)" in found.describe()
