"""The personal-data detectors: typed placeholders, protected phrases, exact detectors first.
spaCy and Presidio load once for the module (a few seconds)."""

from collections import Counter

import pytest

from evals.authoring.pii import Detectors, Found, catalogue_phrases


@pytest.fixture(scope="module")
def detectors():
    found = Detectors(keep=catalogue_phrases())
    found.find("Warm-up from Jordan Rivera.")
    return found


def test_each_kind_gets_its_placeholder_and_is_counted(detectors):
    counts = Counter()
    text = "Jordan Rivera, jr@example.org, +44 20 7946 0958, 42 Willow Drive, Austin, TX 78701"
    assert detectors.scrub(text, counts) == "[name], [email], [phone], [address]"
    assert counts == Counter(name=1, email=1, phone=1, address=1)
    assert detectors.scrub("nothing here", counts) == "nothing here"


def test_a_protected_phrase_survives_whatever_a_detector_takes_it_for(detectors):
    text = "Jordan Rivera is free today."
    assert [f.kind for f in detectors.find(text)] == ["name"]
    assert Detectors(keep=["jordan rivera"]).find(text) == []  # case-insensitive, whole words


def test_a_number_wins_over_a_street_rule_that_starts_on_it(detectors):
    text = "Call 339-555-0102 when ticket 5 is closed."
    assert detectors.find(text) == [Found(5, 17, "phone")]


def test_names_from_the_records_are_replaced_as_whole_words(detectors):
    counts = Counter()
    with_names = Detectors(keep=catalogue_phrases(), names=["zed"])
    assert with_names.scrub("ask zed, not zedd", counts) == "ask [name], not zedd"
    assert counts == Counter(name=1)


def names(detectors, text):
    return [text[f.start:f.end] for f in detectors.find(text) if f.kind == "name"]


def test_a_name_given_as_a_name_is_found_where_the_entity_model_misses_it(detectors):
    assert names(detectors, "My friend called Jordan Rivera left her SD card.") == \
        ["Jordan Rivera"]
    assert names(detectors, "A jacket with the name Sofia Rossi on the tag.") == ["Sofia Rossi"]
    assert names(detectors, "I'm Priyanka Deshmukh, a second-year in mech eng.") == \
        ["Priyanka Deshmukh"]


def test_a_person_entity_is_widened_to_the_whole_name(detectors):
    assert names(detectors, "Our group is Ravi Kumar, Ana Souza and Jonas Berg.") == \
        ["Ravi Kumar", "Ana Souza", "Jonas Berg"]


def test_a_number_the_plan_cannot_vouch_for_counts_only_in_a_phones_grouping(detectors):
    assert detectors.find("Order 4471-2093-55 and part 5566-778 and 2008006 came.") == []
    text = "Call 555 867 5309 or 555.867.5309 or +44 20 7946 0958."
    assert [text[f.start:f.end] for f in detectors.find(text)] == [
        "555 867 5309", "555.867.5309", "+44 20 7946 0958"]


def test_a_street_takes_the_town_named_after_it_but_not_the_full_stop(detectors):
    for text, street in [("home address: 8 Maple Rd, Springfield", "8 Maple Rd, Springfield"),
                         ("I live at 12 Elm Street.", "12 Elm Street")]:
        assert [text[f.start:f.end] for f in detectors.find(text)] == [street]
