"""Edits of one file's entries: entries appended and removed, a form's text as YAML keeps it, a
key set beside its neighbour (or left as the file says it)."""

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import LiteralScalarString

from evals.workspace import edits
from evals.workspace.entries import edit_entries


def test_appending_and_removing_entries():
    text = "- statement: one\n  applies_to: all\n"
    added = edit_entries(text, "c.yaml", edits.appended({"statement": "two",
                                                         "applies_to": ["x"]}))
    assert added == ("- statement: one\n  applies_to: all\n\n- statement: two\n"
                     "  applies_to:\n    - x\n")
    assert edit_entries(added, "c.yaml", edits.on_index(1, None)) == text + "\n"


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
