"""The personal-data detectors: typed placeholders, protected phrases, exact detectors first.
spaCy and Presidio load once for the module (a few seconds)."""

import json
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


@pytest.mark.parametrize("text, phone, street", [
    ("Call 617-555-0199 12 Elm Street if the Form 4 print is ready.", "617-555-0199",
     "12 Elm Street"),
    ("My number is 555-867-5309 and I live at 42 Oak Avenue", "555-867-5309", "42 Oak Avenue"),
])
def test_a_street_right_after_a_phone_number_is_found(detectors, text, phone, street):
    assert [(text[f.start:f.end], f.kind) for f in detectors.find(text)] == [
        (phone, "phone"), (street, "address")]


@pytest.mark.parametrize("number", ["06 12 34 56 78", "0412 345 678"])
def test_a_local_number_counts_only_when_its_region_is_configured(detectors, number):
    text = f"You can reach me on {number} about the Form 4."
    lab_only = Detectors(keep=catalogue_phrases(), regions="US,GB")
    visitors = Detectors(keep=catalogue_phrases(), regions="US,GB,FR,AU")
    assert [f.kind for f in lab_only.find(text)] == []
    assert [text[f.start:f.end] for f in visitors.find(text)] == [number]


def test_a_part_number_valid_in_a_visitors_region_is_not_a_phone(detectors):
    text = "The order number is 4471-2093-55 for the resin."
    assert Detectors(regions="US,GB,FR,IN,AU").find(text) == []


def test_student_ids_follow_the_configured_pattern(detectors):
    text = "I'm U20231234 (student id: 20231234); my old card said S-99887766."
    default = [(text[f.start:f.end], f.kind) for f in detectors.find(text)]
    assert default == [("U20231234", "student_id"), ("20231234", "student_id")]
    own = Detectors(student_id=r"\bS-\d{8}\b")
    assert [text[f.start:f.end] for f in own.find(text) if f.kind == "student_id"] == [
        "S-99887766"]
    counts = Counter()
    assert detectors.scrub("matric no. 20231234", counts) == "matric no. [student id]"
    assert counts == {"student_id": 1}


def test_a_tool_calls_arguments_are_read_value_by_value(detectors):
    arguments = ('{"machine": "Form 4", "reporter": "jo bloggs", "description": "The resin'
                 ' tank is cracked, call me on 617-555-0199", "contact_email": "jo@example.org"}')
    counts = Counter()
    out = detectors.scrub_arguments(arguments, counts)
    assert json.loads(out) == {"machine": "Form 4", "reporter": "[name]",
                               "description": "The resin tank is cracked, call me on [phone]",
                               "contact_email": "[email]"}
    assert counts == {"name": 1, "phone": 1, "email": 1}


@pytest.mark.parametrize("text, name", [
    ("Bonjour, je m'appelle Camille Laurent et la Form 4 ne démarre pas.", "Camille Laurent"),
    ("Hallo, ich heiße Jürgen Vogel, der Laser ist kaputt.", "Jürgen Vogel"),
    ("Здравствуйте, меня зовут Ольга Смирнова.", "Ольга Смирнова"),
    ("你好，我叫李晓华，想预约激光切割机。", "李晓华"),
    ("my name is olivia brown, the cricut blade is dull", "olivia brown"),
    ("Ich bin Lukas Becker und der Drucker ist kaputt.", "Lukas Becker"),
    ("Hola Pedro, ¿está libre la Form 4?", "Pedro"),
    ("请转告李晓华同学，激光切割机修好了。", "李晓华"),
    ("김민준 씨가 예약했어요.", "김민준"),
    ("Передайте это Ольге Смирновой, пожалуйста.", "Ольге Смирновой"),
    ("Xin chào, báo cáo từ Trần Thị Mai nhé.", "Trần Thị Mai"),
])
def test_a_name_given_in_another_language_or_script_is_found(detectors, text, name):
    assert [text[f.start:f.end] for f in detectors.find(text) if f.kind == "name"] == [name]


@pytest.mark.parametrize("text", [
    "Ich bin Student im dritten Jahr.", "Hi Team, is the Form 4 free?", "Москва большая.",
    "I am looking for the Form 4.",
])
def test_a_cue_without_a_name_after_it_takes_nothing(detectors, text):
    assert [text[f.start:f.end] for f in detectors.find(text) if f.kind == "name"] == []


def test_a_machines_name_in_a_tool_call_is_not_taken_for_a_person(detectors):
    arguments = '{"machine": "Glowforge Pro", "reporter": "Giulia Bianchi"}'
    assert [(arguments[f.start:f.end], f.kind) for f in detectors.find_arguments(arguments)] == [
        ("Giulia Bianchi", "name")]


def test_a_student_id_written_against_another_script_is_found(detectors):
    text = "학번은 U20229012입니다."
    assert [(text[f.start:f.end], f.kind) for f in detectors.find(text)] == [
        ("U20229012", "student_id")]
