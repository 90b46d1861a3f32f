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
