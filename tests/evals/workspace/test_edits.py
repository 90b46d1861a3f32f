"""What the forms change, as edits of one file's entries: entries appended and removed, and
criteria rows written without a YAML alias."""

from evals.workspace import edits
from evals.workspace.sources import (
    edit_entries,
)


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
