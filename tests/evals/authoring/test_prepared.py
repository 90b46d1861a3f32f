"""The prepared file: a marker with a hash above each scenario; a file of untouched drafts may
be written over, one with a scenario a person wrote or edited may not (each named at
file:line); a marked kind in the suite folder, and every id there, is found."""

import yaml

from evals.authoring.prepared import Written, content_hash, edited, marker, read_suite, render

SCENARIO = {"id": "prepared-one", "group": "catalog", "context": {},
            "visitor": {"who": "an invented student", "wants": "a laser cutter"},
            "criteria": [{"statement": "It names the Trotec Speedy 400."}]}


def written(tmp_path, *scenarios):
    path = tmp_path / "prepared.yaml"
    path.write_text(render([Written(f"catalog/k{n}", "catalog: anonymous on /", s)
                            for n, s in enumerate(scenarios)], [], [], {}, {}, "m", "today"))
    return path


def test_the_hash_is_of_the_data_not_its_layout():
    reordered = dict(reversed(list(SCENARIO.items())))
    assert content_hash(reordered) == content_hash(SCENARIO)
    assert content_hash({**SCENARIO, "id": "other"}) != content_hash(SCENARIO)
    assert marker("catalog/goal", SCENARIO) == f"# prepared: catalog/goal {content_hash(SCENARIO)}"


def test_untouched_drafts_may_be_written_over(tmp_path):
    assert edited(tmp_path / "none.yaml") == []
    path = written(tmp_path, SCENARIO, {**SCENARIO, "id": "prepared-two"})
    assert edited(path) == []
    # a new layout and comments are not edits
    text = path.read_text().replace("  criteria:", "  # reviewed\n  criteria:")
    path.write_text(text)
    assert edited(path) == []
    assert edited(written(tmp_path)) == []  # no scenario at all


def test_an_edited_or_unmarked_scenario_is_named(tmp_path):
    path = written(tmp_path, SCENARIO, {**SCENARIO, "id": "prepared-two"})
    text = path.read_text().replace("wants: a laser cutter", "wants: a 3D printer", 1)
    path.write_text(text + "\n- id: by-hand\n  visitor: {who: someone, wants: something}\n")
    lines = text.splitlines()
    first = lines.index("- id: prepared-one") + 1
    assert edited(path) == [
        f"prepared.yaml:{first}: 'prepared-one' was edited since it was prepared",
        f"prepared.yaml:{len(lines) + 2}: 'by-hand' has no '# prepared:' line: a person"
        " wrote it"]
    path.write_text("- id: [unclosed\n")
    (problem,) = edited(path)
    assert problem.startswith("prepared.yaml:2: YAML:") and "can tell nothing" in problem


def test_the_suite_folder_gives_its_ids_and_marked_kinds(tmp_path):
    (tmp_path / "criteria.yaml").write_text("# prepared: catalog/shared 0123456789ab\n")
    (tmp_path / "kept.yaml").write_text(
        "# moved in from a prepared file, then edited\n"
        f"{marker('catalog/goal', SCENARIO)}\n"
        + yaml.safe_dump([{**SCENARIO, "id": "kept-one"}], sort_keys=False))
    (tmp_path / "broken.yaml").write_text("- id: broken-one\n  visitor: [\n")
    (tmp_path / "plain.yaml").write_text("- id: plain-one\n  visitor: {who: a, wants: b}\n")
    suite = read_suite(tmp_path)
    assert suite.kinds == {"catalog/goal": "kept.yaml:2"}
    assert suite.ids == {"kept-one": "kept.yaml:3", "plain-one": "plain.yaml:1"}
