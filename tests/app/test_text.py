"""Text as the store holds it: what is removed from outside data, and what a hand-written
file may not hold, named one way."""

import pytest

from app.text import CONTROL, control_named, storable


def test_storable_removes_nul_and_lone_surrogates_everywhere_in_a_value():
    value = {"a\x00": ["b\ud800c", ("d",)], "n": 3, "t": "tab\tand\nline"}
    assert storable(value) == {"a": ["bc", ["d"]], "n": 3, "t": "tab\tand\nline"}


@pytest.mark.parametrize(("text", "found"), [
    ("plain\ttext\r\n", None), ("bell\x07", "\x07"), ("\x00", "\x00"), ("del\x7f", "\x7f"),
    ("escape\x1b[0m", "\x1b"), ("é and ünïcode", None)])
def test_control_finds_what_a_hand_written_file_may_not_hold(text, found):
    match = CONTROL.search(text)
    assert (match.group() if match else None) == found


def test_a_refused_character_is_named_by_its_code_point():
    assert control_named("\x07") == "control character U+0007"
    assert control_named("\x7f") == "control character U+007F"


def test_found_in_names_the_keys_and_places_that_lead_to_the_first_match():
    from app.text import UNSTORABLE, found_in

    value = {"name": "ok", "units": [{"label": "u1"}, {"label": "u\x072"}]}
    assert found_in(value, CONTROL) == (("units", 1, "label"), "\x07")
    assert found_in({"ke\x00y": "v"}, CONTROL, UNSTORABLE) == (("ke\x00y",), "\x00")
    assert found_in(["half \ud800"], CONTROL, UNSTORABLE) == ((0,), "\ud800")
    assert found_in({"n": 3, "t": ["tab\there"]}, CONTROL) is None
