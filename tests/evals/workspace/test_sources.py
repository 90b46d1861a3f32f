"""The workspace's writes: untouched entries kept byte for byte, stale revisions refused,
invalid results refused with the loader's message, and all-or-nothing across files."""

import os
from pathlib import Path

import pytest

from evals.settings import CASES_DIR, SCENARIOS_DIR
from evals.workspace import edits, entries, refusals, sources
from evals.workspace.entries import edit_entries, layout
from evals.workspace.field_edits import case_fields, set_group
from evals.workspace.frozen_edits import At, tool_result
from evals.workspace.refusals import Conflict, Invalid, Stale, WriteFailed
from evals.workspace.sources import Sources, Writer, revision


def snapshot(src: Sources) -> dict[str, str]:
    return {name: src.read(name) for name in src.files()}


def test_every_file_cuts_into_entries_and_joins_back_exactly():
    paths = [*CASES_DIR.glob("*.yaml"), *SCENARIOS_DIR.glob("*.yaml")]
    assert len(paths) >= 10
    for path in paths:
        text = path.read_text()
        cut = layout(text, path.name)
        assert cut.join() == text and cut.entries, path


def test_an_edit_changes_its_entry_only_and_keeps_comments_elsewhere():
    text = ("# head comment\n- id: a\n  prompt: \"A\"  # why A\n  context: { page: gallery }\n"
            "\n# about b\n- id: b\n  prompt: 'B'\n  assert:\n    - kind: no_unknown_tools\n")
    out = edit_entries(text, "x.yaml", edits.on_entry("b", set_group("tour")))
    assert out == ("# head comment\n- id: a\n  prompt: \"A\"  # why A\n"
                   "  context: { page: gallery }\n\n# about b\n- id: b\n  group: tour\n"
                   "  prompt: 'B'\n  assert:\n    - kind: no_unknown_tools\n")


def test_an_edited_entry_keeps_the_text_of_the_lines_the_edit_does_not_touch():
    """ruamel.yaml would write the whole entry again (a flow mapping on one line, `{ a: 1 }`
    as `{a: 1}`, a comment's column moved); only the changed lines come from it."""
    text = ("- id: a\n  context: { page: gallery }\n  photos: [x.jpg]      # aligned\n"
            "  rows:\n    - {id: 1, title: One,\n       status: open}\n  max_turns: 4\n")
    data = entries.load_entry(text)
    data["max_turns"] = 5
    assert entries.rewritten(text, data) == text.replace("max_turns: 4", "max_turns: 5")
    data["rows"][0]["status"] = "closed"  # inside the flow mapping: that mapping is rewritten
    assert entries.rewritten(text, data) == (
        "- id: a\n  context: { page: gallery }\n  photos: [x.jpg]      # aligned\n"
        "  rows:\n    - {id: 1, title: One, status: closed}\n  max_turns: 5\n")


def test_a_file_the_workspace_cannot_cut_is_refused():
    with pytest.raises(refusals.WriteRefused, match="edit this file by hand"):
        layout("[{id: a, prompt: b}]\n", "flow.yaml")


def test_a_save_writes_the_change_and_returns_its_diff(tree):
    before = snapshot(tree)
    name = "cases/honest-absence.yaml"
    diffs = Writer(tree).commit({name: revision(before[name])},
                                {name: edits.on_entry("no-glowforge", set_group("absence"))})
    after = snapshot(tree)
    assert list(diffs) == [name] and "+  group: absence" in diffs[name]
    assert {n for n in after if after[n] != before[n]} == {name}
    assert after[name] == before[name].replace(
        "- id: no-glowforge\n", "- id: no-glowforge\n  group: absence\n", 1)


def test_a_stale_revision_is_refused_and_nothing_is_written(tree):
    name = "cases/honest-absence.yaml"
    old = revision(tree.read(name))
    tree.path(name).write_text(tree.read(name) + "\n# edited by hand\n")
    before = snapshot(tree)
    with pytest.raises(Stale, match="honest-absence.yaml changed since"):
        Writer(tree).commit({name: old}, {name: edits.on_entry("no-glowforge",
                                                               set_group("x"))})
    assert snapshot(tree) == before


def test_a_form_without_a_revision_is_refused(tree):
    name = "cases/honest-absence.yaml"
    with pytest.raises(refusals.WriteRefused, match="did not say which revision"):
        Writer(tree).commit({}, {name: edits.on_entry("no-glowforge", set_group("x"))})


def test_an_invalid_result_is_refused_with_the_loaders_message(tree):
    name = "cases/honest-absence.yaml"
    before = snapshot(tree)
    change = case_fields("No Glowforge!", "x", "", "", "")  # an id the loader refuses
    with pytest.raises(Invalid, match=r"honest-absence\.yaml:\d+: id"):
        Writer(tree).commit({name: revision(before[name])},
                            {name: edits.on_entry("no-glowforge", change)})
    assert snapshot(tree) == before


def test_an_id_taken_by_a_scenario_is_refused(tree):
    name = "cases/honest-absence.yaml"
    before = snapshot(tree)
    change = case_fields("anonymous-smoke-report", "x", "", "", "")
    with pytest.raises(Invalid, match=r"problem-reports\.yaml:\d+: id 'anonymous-smoke-report'"
                                      r" is a case's id \(the case at honest-absence\.yaml:\d+\)"):
        Writer(tree).commit({name: revision(before[name])},
                            {name: edits.on_entry("no-glowforge", change)})
    assert snapshot(tree) == before


def test_an_entry_gone_since_the_form_opened_is_a_conflict(tree):
    name = "cases/honest-absence.yaml"
    with pytest.raises(Conflict, match="'no-such-case' is no longer in its file"):
        Writer(tree).commit({name: revision(tree.read(name))},
                            {name: edits.on_entry("no-such-case", set_group("x"))})


def test_when_the_second_of_two_files_fails_to_write_neither_changes(tree, monkeypatch):
    a, b = "cases/honest-absence.yaml", "scenarios/machines-we-lack.yaml"
    before = snapshot(tree)
    calls = []
    real = os.replace

    def second_fails(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(sources.os, "replace", second_fails)
    with pytest.raises(WriteFailed, match="every file was left as it was"):
        Writer(tree).commit({a: revision(before[a]), b: revision(before[b])},
                            {a: edits.on_entry("no-glowforge", set_group("x")),
                             b: edits.on_entry("glowforge-under-pressure",
                                               set_group("x"))})
    assert len(calls) == 3 and snapshot(tree) == before  # the first put back by a rename
    leftovers = [p.name for p in Path(tree.cases).iterdir()] + [
        p.name for p in Path(tree.scenarios).iterdir()]
    assert not [n for n in leftovers if n.startswith(".")], leftovers  # no temporaries left


def test_frozen_responses_must_fit_the_tools_result_schema(tree):
    from app.capabilities import REGISTRY

    name = "scenarios/curation.yaml"
    tool = REGISTRY.all_tools()["read_page"]
    rev = revision(tree.read(name))
    bad = tool_result("read_page", tool.contract(), At(None, 0), {"url": "https://x"})
    with pytest.raises(Invalid, match="read_page response 1 does not fit the result schema"):
        Writer(tree).commit({name: rev},
                            {name: edits.on_entry("web-page-with-frozen-answer", bad)})
    good = tool_result("read_page", tool.contract(), At(None, None),
                       {"error": "timed out"})
    diffs = Writer(tree).commit({name: rev},
                                {name: edits.on_entry("web-page-with-frozen-answer", good)})
    assert "+        - error: timed out" in diffs[name]


def test_a_heading_comment_stays_with_the_entry_below_it():
    text = ("# cases about a\n- id: a\n  prompt: A\n\n# section two: about b\n- id: b\n"
            "  prompt: B\n\n# about c\n- id: c\n  prompt: C\n")
    edited = edit_entries(text, "x.yaml", edits.on_entry("a", set_group("g")))
    assert edited == text.replace("- id: a\n", "- id: a\n  group: g\n")
    removed = edit_entries(text, "x.yaml", edits.on_index(1, None))
    assert removed == ("# cases about a\n- id: a\n  prompt: A\n\n# about c\n- id: c\n"
                       "  prompt: C\n")


def test_crlf_files_keep_their_line_endings(tree):
    name = "cases/honest-absence.yaml"
    path = tree.path(name)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    before = tree.read(name)
    Writer(tree).commit({name: revision(before)},
                        {name: edits.on_entry("no-cnc-router", set_group("g"))})
    after = path.read_bytes()
    assert b"\n" not in after.replace(b"\r\n", b"")  # every line still ends in CRLF
    assert after == before.encode().replace(b"- id: no-cnc-router\r\n",
                                            b"- id: no-cnc-router\r\n  group: g\r\n")


def test_a_file_without_a_final_newline_gets_an_appended_entry_on_its_own_line():
    text = "- statement: one\n  applies_to: all\n# trailing note"
    added = edit_entries(text, "c.yaml", edits.appended({"statement": "two",
                                                         "applies_to": "all"}))
    assert added.endswith("# trailing note\n- statement: two\n  applies_to: all\n")


def test_the_workspace_writes_only_inside_its_folders(tree):
    with pytest.raises(refusals.WriteRefused, match="not a case or scenario file"):
        Writer(tree).commit({"../secrets.yaml": "x"}, {"../secrets.yaml": edits.appended({})})


def test_the_schema_line_stays_first_whatever_entry_changes():
    line = "# yaml-language-server: $schema=../schemas/case-file.schema.json\n"
    text = line + "# cases about a\n- id: a\n  prompt: A\n\n# about b\n- id: b\n  prompt: B\n"
    cut = layout(text, "x.yaml")
    assert cut.head == line and cut.leads[0] == "# cases about a\n"
    removed = edit_entries(text, "x.yaml", edits.on_index(0, None))
    assert removed == line + "# about b\n- id: b\n  prompt: B\n"  # the heading went, not it
    edited = edit_entries(text, "x.yaml", edits.on_entry("a", set_group("g")))
    assert edited == text.replace("- id: a\n", "- id: a\n  group: g\n")
    emptied = edit_entries(removed, "x.yaml", edits.on_index(0, None))
    assert emptied == line
    added = edit_entries(emptied, "x.yaml", edits.appended({"id": "c", "prompt": "C"}))
    assert added == line + "- id: c\n  prompt: C\n"


def test_a_save_keeps_every_file_naming_its_schema(tree):
    name = "cases/manual-search.yaml"
    before = tree.read(name)
    assert before.startswith("# yaml-language-server: $schema=../schemas/case-file.schema.json\n"
                             "# Answering from search_manual")
    first = layout(before, name).entries[0]
    Writer(tree).commit({name: revision(before)},
                        {name: lambda entries: [e for e in entries if e != first]})
    after = tree.read(name)
    assert after.startswith("# yaml-language-server: $schema=../schemas/case-file.schema.json\n")
    assert first not in after
