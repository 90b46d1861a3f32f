"""A change to what the model is told, said once the same way by impact and attribution."""

from evals.record.comparison import Change, FragmentDiff, ToolDiff
from evals.report.diff import diff_lines


def test_each_fragment_then_each_tool_with_its_lines_and_how_many_more():
    change = Change(
        prompt=(FragmentDiff(capability="maintenance", diff=("-a", "+b"), more=3),
                FragmentDiff(capability="removed text (near units)", diff=("-c",))),
        tools=(ToolDiff(name="update_ticket", capability="maintenance",
                        what="description changed", diff=("+Say which.",), more=1),
               ToolDiff(name="gone_tool", capability=None, what="removed")))
    assert diff_lines(change) == [
        "maintenance:", "  -a", "  +b", "  … 3 more changed line(s)",
        "removed text (near units):", "  -c",
        "tool update_ticket (maintenance): description changed", "  +Say which.",
        "  … 1 more changed line(s)",
        "tool gone_tool (no capability registers it): removed"]
    assert diff_lines(Change(model="a → b")) == []
