"""What the forms change, as edits of one file's entries: entries appended and removed, criteria
rows written without a YAML alias, a form's text as YAML keeps it, a key set beside its
neighbour (or left as the file says it), and the values a form gives parsed."""

import pytest
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import LiteralScalarString

from evals.workspace import edits
from evals.workspace.sources import Invalid, edit_entries


def test_appending_and_removing_entries():
    text = "- statement: one\n  applies_to: all\n"
    added = edit_entries(text, "c.yaml", edits.appended({"statement": "two",
                                                         "applies_to": ["x"]}))
    assert added == ("- statement: one\n  applies_to: all\n\n- statement: two\n"
                     "  applies_to:\n    - x\n")
    assert edit_entries(added, "c.yaml", edits.on_index(1, None)) == text + "\n"


def test_two_identical_criteria_rows_write_no_yaml_alias():
    text = "- id: s\n  criteria:\n    - statement: Same.\n    - statement: Other.\n"
    change = edits.scenario_fields(None, None, None, {}, [("Same.", "required"),
                                                         ("Same.", "required")])
    out = edit_entries(text, "s.yaml", edits.on_entry("s", change))
    assert "&" not in out and "*" not in out
    assert out == "- id: s\n  criteria:\n    - statement: Same.\n    - statement: Same.\n"


def test_a_forms_text_as_yaml_will_keep_it():
    assert edits.text_value(None) is None  # no such field in the form: nothing changes
    assert edits.text_value("  one line \r\n") == "one line"
    block = edits.text_value("first\r\nsecond\r")
    assert isinstance(block, LiteralScalarString) and block == "first\nsecond\n"


def test_a_key_is_set_after_its_neighbour_removed_when_emptied_and_left_when_unchanged():
    data = CommentedMap(id="a", prompt="Is it free?  ")
    edits.set_key(data, "group", "tour", after="id")
    assert list(data.items()) == [("id", "a"), ("group", "tour"), ("prompt", "Is it free?  ")]
    edits.set_key(data, "prompt", "Is it free?")  # says what the file says: its text stays
    edits.set_key(data, "prompt", None)  # not in the form: left alone
    assert data["prompt"] == "Is it free?  "
    edits.set_key(data, "group", "")
    assert "group" not in data


def test_applies_to_and_a_frozen_response_as_a_form_gives_them():
    assert edits.parse_applies_to("") == "all" == edits.parse_applies_to(" all ")
    assert list(edits.parse_applies_to("one, two,, ")) == ["one", "two"]
    assert edits.parse_json_object('{"url": "https://x"}', "response 1") == {"url": "https://x"}
    with pytest.raises(Invalid, match="response 1: not JSON: Expecting value at line 1"):
        edits.parse_json_object("nope", "response 1")
    with pytest.raises(Invalid, match="response 2: a response is a JSON object"):
        edits.parse_json_object("[1]", "response 2")
