"""Frozen tool responses edited one result at a time: the edited result is the only change
(branches with their conditions, expressions, delays, states, exhaustion and the order of
every sequence kept as written), the workspace writes no new sequence, condition or default, a
tool with none gets a static response, and where a result is reads and writes the same."""

import pytest
from ruamel.yaml import YAML

from evals.workspace import edits
from evals.workspace.entries import edit_entries
from evals.workspace.frozen_edits import At, tool_result
from evals.workspace.refusals import Invalid
from tests.evals.workspace.branched import BRANCHED, SID, TICKETS, changed_lines


def edited(at, response, tool="list_open_tickets", contract=TICKETS, text=BRANCHED):
    change = tool_result(tool, contract, at, response)
    return edit_entries(text, "s.yaml", edits.on_entry(SID, change))


def data(text):
    return YAML(typ="safe").load(text)[0]


def test_editing_one_result_of_a_branchs_sequence_changes_that_result_only():
    first = {"count": 2, "tickets": [
        {"id": 7, "title": "Smoke when cutting", "status": "open",
         "machine": "Trotec Speedy 400", "slug": "trotec-speedy-400"}]}
    after = edited(At(1, 0), first)
    assert changed_lines(BRANCHED, after) == ["-            - count: 1",
                                              "+            - count: 2"]
    old, new = data(BRANCHED), data(after)
    sequence = new["tool_responses"]["list_open_tickets"]["branches"][1]["responses"]
    assert sequence[0] == first
    sequence[0] = old["tool_responses"]["list_open_tickets"]["branches"][1]["responses"][0]
    assert new == old  # every condition, delay, state, expression and the order as they were


def test_an_expression_in_another_result_and_the_default_are_kept():
    after = edited(At(None, 0), {"tickets": [], "count": 3})
    assert changed_lines(BRANCHED, after) == [
        "-      response: {tickets: [], count: 0}  # another machine's queue: empty",
        "+      response: {tickets: [], count: 3} # another machine's queue: empty"]
    assert "slug: \"{{ args.slug | default('trotec-speedy-400') }}\"}]" in after
    assert "delay_s: 2                    # a slow queue" in after


def test_a_sequence_keeps_its_order_when_a_result_is_added_or_removed():
    added = edited(At(1, None), {"error": "queue unavailable"})
    sequence = data(added)["tool_responses"]["list_open_tickets"]["branches"][1]["responses"]
    assert sequence[-1] == {"error": "queue unavailable"} and len(sequence) == 4
    removed = edited(At(1, 1), None)
    kept = data(removed)["tool_responses"]["list_open_tickets"]["branches"][1]["responses"]
    old = data(BRANCHED)["tool_responses"]["list_open_tickets"]["branches"][1]["responses"]
    assert kept == [old[0], old[2]]


def test_the_workspace_writes_no_new_sequence_condition_or_default():
    with pytest.raises(Invalid, match="does not turn it into a sequence"):
        edited(At(0, None), {"tickets": [], "count": 1})  # branch 1 is static
    with pytest.raises(Invalid, match="removes no branch or default"):
        edited(At(0, 0), None)
    with pytest.raises(Invalid, match="removes no branch or default"):
        edited(At(None, 0), None)


def test_a_tool_with_no_frozen_responses_gets_a_static_one():
    text = "- id: s\n  visitor: {who: a student, wants: a page}\n  criteria:\n    - statement: S.\n"
    change = tool_result("read_page", "575308e42ea7", At(),
                               {"url": "https://x.example", "text": "T"}, "repeat_last")
    after = edit_entries(text, "s.yaml", edits.on_entry("s", change))
    assert data(after)["tool_responses"] == {"read_page": {
        "contract": "575308e42ea7", "response": {"url": "https://x.example", "text": "T"},
        "exhausted": "repeat_last"}}


def test_where_a_result_is_reads_and_writes_the_same():
    for text in ("default-1", "default-new", "branch-2-3", "branch-10-new"):
        assert At.parse(text).key() == text
    assert At.parse("branch-0-1") is None and At.parse("default") is None

