"""`python -m evals schema`: the committed schemas are what the models generate (a test that
fails when one is stale), and the command writes them, checks them for CI, prints one, and
names each case and scenario file's schema on its first line."""

import json
import shutil

import pytest

import evals.cli.schema as schema_cli
import evals.record.schema as record_schema
from evals.cli import main
from evals.cli.schema import SCHEMAS
from evals.load.cases import load_cases_by_file
from evals.load.scenarios import load_scenarios
from evals.load.schema import item_files
from evals.settings import CASES_DIR, SCENARIOS_DIR


def test_the_committed_schemas_are_what_the_models_generate():
    assert {p.name for p in SCHEMAS} == {"run-record", "case-file", "scenario-file",
                                         "criteria-file"}
    for published in SCHEMAS:
        assert published.path.read_text(encoding="utf-8") == published.text(), (
            f"{published.path} is stale: run `python -m evals schema`")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A copy of the case and scenario files, without their schema lines, beside an empty
    schemas folder, for the command to write."""
    root = tmp_path / "evals"
    for source in (CASES_DIR, SCENARIOS_DIR):
        shutil.copytree(source, root / source.name)
    for path in item_files(root / "cases", root / "scenarios"):
        path.write_text(path.read_text().split("\n", 1)[1])
    monkeypatch.setattr(record_schema, "SCHEMAS_DIR", root / "schemas")
    monkeypatch.setattr(schema_cli, "item_files",
                        lambda: item_files(root / "cases", root / "scenarios"))
    monkeypatch.setattr(schema_cli, "PROJECT_ROOT", tmp_path)
    return root


def test_check_names_each_missing_schema_and_each_file_without_its_line(tree, capsys):
    assert main(["schema", "--check"]) == 1
    err = capsys.readouterr().err
    for p in SCHEMAS:
        assert f"evals/schemas/{p.name}.schema.json: missing; run `python -m evals schema`" \
            in err
    assert ("evals/cases/security.yaml:1: does not name its schema; its first line should be"
            " `# yaml-language-server: $schema=../schemas/case-file.schema.json`") in err
    assert "evals/scenarios/criteria.yaml:1: does not name its schema; its first line should" \
           " be `# yaml-language-server: $schema=../schemas/criteria-file.schema.json`" in err
    assert not (tree / "schemas").exists()  # --check writes nothing


def test_schema_writes_the_schemas_and_the_lines_then_finds_nothing_to_do(tree, capsys):
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert "wrote evals/schemas/case-file.schema.json" in out
    assert "named its schema on the first line of evals/scenarios/safety.yaml" in out
    for p in SCHEMAS:
        assert json.loads((tree / "schemas" / f"{p.name}.schema.json").read_text()) \
            == p.schema()
    first = (tree / "scenarios" / "safety.yaml").read_text().split("\n", 1)[0]
    assert first == "# yaml-language-server: $schema=../schemas/scenario-file.schema.json"
    cases, errors = load_cases_by_file(tree / "cases")  # the files load as before
    assert not errors and len(cases) == len(load_cases_by_file(CASES_DIR)[0])
    assert load_scenarios(tree / "scenarios")[0]
    assert main(["schema", "--check"]) == 0
    assert "the 4 schemas are up to date" in capsys.readouterr().out
    assert main(["schema"]) == 0
    assert "nothing written" in capsys.readouterr().out


def test_a_stale_schema_or_a_wrong_line_is_named_and_put_right(tree, capsys):
    assert main(["schema"]) == 0
    stale = tree / "schemas" / "run-record.schema.json"
    stale.write_text(stale.read_text().replace('"run_id"', '"run"'))
    path = tree / "cases" / "security.yaml"
    text = path.read_text()
    path.write_text(text.replace("case-file.schema", "scenario-file.schema", 1))
    capsys.readouterr()
    assert main(["schema", "--check"]) == 1
    err = capsys.readouterr().err
    assert "evals/schemas/run-record.schema.json: stale (the models say otherwise)" in err
    assert "evals/cases/security.yaml:1: does not name its schema" in err
    assert err.count("\n") == 2
    assert main(["schema"]) == 0
    assert path.read_text() == text and main(["schema", "--check"]) == 0


def test_print_writes_one_schema_to_stdout(capsys):
    assert main(["schema", "--print", "case-file"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["title"] == "Case file" and out.endswith("}\n")
    assert main(["schema", "--print", "cases"]) == 2
    assert "invalid choice: 'cases'" in capsys.readouterr().err
