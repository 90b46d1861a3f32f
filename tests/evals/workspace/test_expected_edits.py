"""What the scenario form changes of a scenario's expected actions: the selectors an edit is
about, an action removed or added, and the rest of the entry as written."""

from evals.workspace import edits
from evals.workspace.entries import edit_entries
from evals.workspace.expected_edits import Expected, expected_actions

ENTRY = """\
- id: s
  visitor: {who: a student, wants: to report}   # why
  expect_actions:
    - tool: report_issue
      arguments: { slug: trotec-speedy-400, description_contains: smoke }
      result: {filed: true}
    - tool: search_manual
  criteria:
    - statement: S.
"""


def change(rows):
    return edit_entries(ENTRY, "s.yaml", edits.on_entry("s", expected_actions(rows)))


def test_an_edit_changes_the_selectors_it_is_about_and_keeps_the_rest_as_written():
    report = Expected("report_issue",
                      {"slug": "trotec-speedy-400", "description_contains": "smoke"},
                      {"filed": True})
    assert change([(0, report), (1, Expected("search_manual", {}, {}))]) == ENTRY
    changed = Expected("report_issue", {"slug": "form-4", "description_contains": "smoke"},
                       {"filed": True, "anonymous": True})
    after = change([(0, changed)])  # the second action removed
    assert after == ENTRY.replace("{ slug: trotec-speedy-400, description_contains: smoke }",
                                  "{slug: form-4, description_contains: smoke}").replace(
        "{filed: true}", "{filed: true, anonymous: true}").replace(
        "    - tool: search_manual\n", "")
    added = change([(0, report), (1, Expected("search_manual", {}, {})),
                    (None, Expected("get_machine_details", {"slug_in": ["form-4"]}, {}))])
    assert added == ENTRY.replace(
        "    - tool: search_manual\n",
        "    - tool: search_manual\n    - tool: get_machine_details\n"
        "      arguments: {slug_in: [form-4]}\n")
