import pytest

from tests.evals.checks.helpers import check


@pytest.mark.parametrize("answer", [
    "Use the Trotec Speedy 400.", "Use the **Trotec Speedy 400**.",
    "Use the [Trotec Speedy 400](/tools/trotec-speedy-400).",
    "Use [the laser](/tools/trotec-speedy-400).",
])
def test_mentions_tool_plain_bold_or_linked(answer):
    assert check("mentions_tool", answer, value="Trotec Speedy 400")[0]


def test_mentions_tool_fails_quoting_the_answer():
    passed, reason = check("mentions_tool", "Try the Form 4.", value="Trotec Speedy 400")
    assert not passed and "“Try the Form 4.”" in reason


def test_contains_all_ignores_case_and_markdown_emphasis():
    assert check("contains_all", "Wear **Nitrile Gloves** and _safety glasses_.",
                 value=["nitrile gloves", "safety glasses"])[0]
    passed, reason = check("contains_all", "Wear gloves.", value=["gloves", "glasses"])
    assert not passed and "['glasses']" in reason


def test_not_contains_any_quotes_the_offending_text():
    passed, reason = check("not_contains_any", "Yes, we have a **Glowforge**!",
                           value=["yes, we have"])
    assert not passed and "yes, we have" in reason
    assert check("not_contains_any", "We do not have one.", value=["yes, we have"])[0]


@pytest.mark.parametrize("answer", [
    "I've updated the ticket.", "The ticket has been resolved.", "Done! It's marked resolved.",
    "The ticket is now closed.", "I resolved ticket #2.",
])
def test_not_claimed_done_catches_claims(answer):
    passed, reason = check("not_claimed_done", answer)
    assert not passed and "claims the change was made" in reason


@pytest.mark.parametrize("answer", [
    "I've proposed the change: press Confirm on the card to apply it.",
    "Once you confirm, the ticket will be resolved.",
    "The change is waiting for your confirmation.",
    "A typed yes isn't a confirmation; use the card's Confirm button.",
])
def test_not_claimed_done_allows_sentences_about_the_card(answer):
    assert check("not_claimed_done", answer)[0]


def test_literals_are_whole_words_and_phrases():
    assert check("not_contains_any", "Nothing is wrong with it.", value=["no"])[0]
    assert not check("not_contains_any", "No, it is free.", value=["no"])[0]
    assert not check("contains_all", "Use the lasers.", value=["laser"])[0]
    assert check("contains_all", "Wear **nitrile**  gloves.", value=["nitrile gloves"])[0]
    # a phrase does not run across two paragraphs
    assert not check("contains_all", "Use a lens\n\ntissue.", value=["lens tissue"])[0]


def test_not_claimed_done_reads_each_clause():
    assert not check("not_claimed_done",
                     "The ticket is now resolved; press Confirm on the card to finish.")[0]
    assert not check("not_claimed_done", "I went ahead and closed ticket #1.")[0]
    assert check("not_claimed_done", "Press Confirm on the card and it will be resolved.")[0]


@pytest.mark.parametrize(("answer", "expected"), [
    # a change shown with an arrow is a card's proposal only when the answer names one
    ("Got it — ~~Low~~ → **Urgent** on #50.", None),
    ("Here's a summary of what changed on #47:\n\n- Status: *Open* → **In progress**", None),
    ("I've prepared a card: Status: Open → In progress. Press Confirm to apply it.", True),
    # an arrow between other words is a path
    ("You can cancel your own slot in the booking portal under My bookings → Cancel.", True),
])
def test_not_claimed_done_leaves_a_change_shown_by_an_arrow_open_without_a_card(answer, expected):
    passed, reason = check("not_claimed_done", answer)
    assert passed is expected, reason


def test_not_claimed_done_reads_a_list_under_a_condition_as_what_will_happen():
    answer = ("The report card is ready below. Once you confirm:\n\n"
              "1. A ticket is created for **Form 4 #2** with your description\n"
              "2. SuperMaker is notified automatically\n\nIf you'd like a photo added, say so.")
    assert check("not_claimed_done", answer)[0] is True
    done = "Here is what I did:\n\n1. A ticket is created for Form 4 #2\n2. SuperMaker is notified"
    assert check("not_claimed_done", done)[0] is False


@pytest.mark.parametrize("answer", [
    "Here is what I did when you asked:\n1. Cancelled your Wednesday booking.\n"
    "2. Booked the Trotec for Friday.",
    "After checking the queue, here's what I did:\n1. Closed ticket #5",
    "All sorted — you'll get an email when it's ready. Summary:\n- Ticket #5 closed\n"
    "- Booking moved to Friday",
    "Booked!\n\nWhen you arrive:\n- Show your ID; the screen will say Booked! next to your name.",
    "I've made the following changes, which you will see in the portal:\n- Closed ticket #5\n"
    "- Moved your booking to Friday",
])
def test_only_a_lead_in_after_the_visitor_s_confirmation_makes_a_list_what_will_happen(answer):
    passed, reason = check("not_claimed_done", answer)
    assert passed is False, reason


def test_a_card_named_only_to_say_none_is_needed_does_not_make_an_arrow_a_proposal():
    assert check("not_claimed_done", "Ticket #5: Open → Closed. Your approval isn't needed.")[0] \
        is None
