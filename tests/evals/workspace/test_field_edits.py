"""What the Tests tab's forms change of a case or a scenario: criteria rows written without a
YAML alias, and a shared criterion's `applies_to` as a form gives it."""

from evals.workspace import edits, field_edits
from evals.workspace.entries import edit_entries


def test_two_identical_criteria_rows_write_no_yaml_alias():
    text = "- id: s\n  criteria:\n    - statement: Same.\n    - statement: Other.\n"
    change = field_edits.scenario_fields(None, None, None, {}, [("Same.", "required"),
                                                               ("Same.", "required")])
    out = edit_entries(text, "s.yaml", edits.on_entry("s", change))
    assert "&" not in out and "*" not in out
    assert out == "- id: s\n  criteria:\n    - statement: Same.\n    - statement: Same.\n"


def test_applies_to_as_a_form_gives_it():
    assert field_edits.parse_applies_to("") == "all" == field_edits.parse_applies_to(" all ")
    assert list(field_edits.parse_applies_to("one, two,, ")) == ["one", "two"]
