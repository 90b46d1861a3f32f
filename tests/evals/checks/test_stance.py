import pytest

from evals.checks._stance import stance


def _stance(sentence, name="Glowforge"):
    start = sentence.index(name)
    return stance(sentence, start, start + len(name))


@pytest.mark.parametrize("sentence", [
    "We don't have a Glowforge.",
    "We have no Glowforge, sorry.",
    "The lab lacks a Glowforge.",
    "There is no Glowforge here.",
    "No Glowforge in this lab, I'm afraid.",
    "Glowforge printers aren't something we have.",
    "The Glowforge is not part of the lab's machines.",
    "Neither the Glowforge nor the xTool is part of the lab.",
    "We don't have an Epilog or a Glowforge.",
    "I can't find a Glowforge in the catalogue.",
    "We don't have a laser cutter like the Glowforge.",
])
def test_denials_with_the_lab_as_subject(sentence):
    assert _stance(sentence) == "denied"


@pytest.mark.parametrize("sentence", [
    "We don't have the Glowforge at the moment.",  # only for now: the lab has one
    "Use the Glowforge.",
    "The Glowforge is booked until 3.",
    "We don't have an Epilog, but the Glowforge is free.",
    "Don't use the Glowforge for PVC.",  # a definite machine: the lab has one
    "The Glowforge by the window is out for repair.",
    "Our laser is a Glowforge.",
    "Alternative: the Glowforge if the Trotec is busy.",
])
def test_readings_measured_as_offers(sentence):
    assert _stance(sentence) == "offered"


@pytest.mark.parametrize("sentence", [
    "If you don't have a Glowforge at home, use ours.",  # someone else's: readers part ways
    "The Trotec is much faster than a Glowforge.",  # a comparison
    "If you've used a Glowforge before, JobControl will feel different.",  # experience
    'If your instructor said "the Glowforge in room 2", that was the old setup.',  # quoted
])
def test_readings_nobody_measured_are_unplaced(sentence):
    assert _stance(sentence) == "unplaced"


def test_a_question_asks_and_a_modifier_names():
    assert _stance("Do you mean the Glowforge?") == "asked"
    assert _stance("We don't have any Glowforge presets.") == "named"
    assert _stance("It's not a Glowforge, it's a Trotec.") == "denied"
    assert _stance("The lab has a Trotec Speedy 400, not an Epilog, and nothing else.",
                   "Epilog") == "denied"
    # the "not" denies the item after it, never the one after that
    assert _stance("We have a Trotec Speedy 400, not an Epilog, and a Glowforge Pro for small"
                   " jobs.", "Glowforge Pro") != "denied"
    assert _stance("The lab has two Form 4 units (not Glowforges — the sign is old).",
                   "Glowforges") == "denied"


def test_a_span_the_parse_cannot_place_is_none():
    assert stance("We have a laser.", 3, 3) is None


def test_answers_no_reads_the_lab_s_elided_no():
    from evals.checks._stance import answers_no
    assert answers_no("We don't.") and answers_no("The lab has never had one.")
    assert not answers_no("We do.") and not answers_no("We don't have the time today.")


def test_joined_keeps_offsets_and_makes_hyphenated_names_one_word():
    from evals.checks._stance import joined
    sentence = "No X-Carve or Carvey-style mill."
    out = joined(sentence, [(3, 10)])
    assert len(out) == len(sentence) and out[3:10] == "XxCarve" and "Carvey-style" in out


@pytest.mark.parametrize("sentence", [
    "We have the Prusa MK4 but not the Glowforge.",
    "The Cricut isn't part of this lab, and neither is a Glowforge.",
    "There is no lathe in this lab, and no Glowforge either.",
    "We don't stock any Markforged or Glowforge machines.",
])
def test_denials_carried_over_a_list_or_an_ellipsis(sentence):
    assert _stance(sentence) == "denied"


def test_a_denial_taken_back_by_a_pronoun_is_an_offer():
    assert _stance("The Glowforge is not in our catalogue yet, but it's on order.") == "offered"
