"""What differs in one context: the prompt's changed lines by capability, the tools by name."""

from evals.execute.impact.context import prompt_changes, tool_changes
from tests.evals.execute.impact.helpers import schema


def test_removed_text_is_put_near_its_capability_and_unknown_fragments_on_the_prompt():
    fragments = {"a": "A one\nA two", "b": "B one"}
    old = "A one\nA two\nA gone\n\nB one"
    new = "A one\nA two\n\nB one"
    (change,) = prompt_changes(old, new, fragments)
    assert change.capability == "removed text (near a)" and change.diff == ("-A gone",)
    # the first line of a fragment removed: after a separator, so the fragment it began
    (change,) = prompt_changes("A one\nA two\n\nB gone\nB one", new, fragments)
    assert change.capability == "removed text (near b)" and change.diff == ("-B gone",)
    (change,) = prompt_changes("x\ny", "x\nz", None)
    assert change.capability == "system prompt" and change.diff == ("-y", "+z")
    (change,) = prompt_changes("x", "x\n", None)
    assert change.diff == ("(whitespace only)",)
    many = "\n".join(f"line {n}" for n in range(20))
    (change,) = prompt_changes("", many, {"a": many})
    assert len(change.diff) == 6 and change.more == 14


def test_a_long_changed_line_is_shown_from_a_little_before_its_difference():
    start = "word " * 30
    (change,) = prompt_changes(start + "old end", start + "new end", None)
    assert change.diff[0].startswith("-…") and change.diff[0].endswith("old end")
    assert change.diff[1].startswith("+…") and change.diff[1].endswith("new end")


def test_tools_added_removed_and_changed_by_name():
    old = [schema("search_catalog"), schema("report_issue", q={"type": "string"}),
           schema("gone_tool")]
    new = [schema("report_issue", q={"type": "integer"}), schema("search_catalog"),
           schema("update_ticket")]
    changes, order = tool_changes(old, new)
    assert not order
    assert [(t.name, t.capability, t.what) for t in changes] == [
        ("gone_tool", None, "removed"),
        ("report_issue", "issue_reports", "parameters changed: q"),
        ("update_ticket", "maintenance", "added")]
    changes, order = tool_changes(old[:2], old[1::-1])
    assert changes == () and order
    odd = {**schema("search_catalog"), "strict": True}
    odd["function"] = {**odd["function"], "strict": True}
    (change,), _ = tool_changes([schema("search_catalog")], [odd])
    assert change.what == "strict changed"
