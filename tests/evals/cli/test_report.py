"""The report commands: a run's HTML page from an artifact, and a rescore against the case
files as they are now."""

import json

import pytest

from evals.cli import main
from evals.record.artifact import write_run as write_record
from tests.evals.cli.helpers import SELECTION
from tests.evals.report.helpers import SENTENCE, record


def test_rescore_from_an_artifact(tmp_path, capsys):
    artifact = {"cases": [{
        "id": "no-glowforge", "file": "honest-absence.yaml", "prompt": "p", "status": "PASS",
        "skipped_reason": None,
        "attempts": [{"answer": "You can book the Glowforge Pro tomorrow.", "tool_calls": [],
                      "error": None}],
    }]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(artifact))
    assert main(["rescore", str(path)]) == 1
    out = capsys.readouterr().out
    assert "  FAIL      no-glowforge" in out and "Glowforge" in out


def _artifact(tmp_path, case_id="no-glowforge", file="honest-absence.yaml"):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"cases": [{
        "id": case_id, "file": file, "prompt": "p", "status": "PASS",
        "attempts": [{"answer": "We don't have a Glowforge.", "tool_calls": []}]}]}))
    return path


def test_rescore_against_other_case_files(tmp_path, capsys):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "honest-absence.yaml").write_text(
        '- id: no-glowforge\n  prompt: "p"\n  assert:\n    - kind: contains_all\n'
        '      value: ["Epilog"]\n')
    assert main(["rescore", str(_artifact(tmp_path)), "--cases", str(cases)]) == 1
    assert "missing ['Epilog']" in capsys.readouterr().out


def test_rescore_of_a_malformed_artifact_names_the_field(tmp_path, capsys):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"cases": [{"id": "x", "prompt": "p", "status": "PASS"}]}))
    assert main(["rescore", str(path)]) == 2
    assert "field cases.0.file: Field required" in capsys.readouterr().err


def test_a_rescore_that_checks_nothing_is_exit_2(tmp_path, capsys):
    path = _artifact(tmp_path, case_id="no-such-case")
    assert main(["rescore", str(path)]) == 2
    assert "nothing was re-checked" in capsys.readouterr().err


def test_a_case_whose_file_no_longer_loads_shows_the_load_error(tmp_path, capsys):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "honest-absence.yaml").write_text("- id: no-glowforge\n  prompt: p\n  bogus: 1\n")
    (cases / "other.yaml").write_text(
        '- id: other\n  prompt: "p"\n  assert:\n    - kind: no_unknown_tools\n')
    assert main(["rescore", str(_artifact(tmp_path)), "--cases", str(cases)]) == 2
    captured = capsys.readouterr()
    assert "ERROR" in captured.out and "its case file no longer loads:" in captured.out
    assert "honest-absence.yaml:3: bogus" in captured.out + captured.err


def test_the_command_writes_the_page_and_refuses_what_it_cannot_read(tmp_path, capsys):
    artifact = write_record(record(), tmp_path / "run.json")
    out = tmp_path / "run.html"
    assert main(["report", str(artifact), "--html", str(out)]) == 0
    assert SENTENCE in out.read_text()
    (tmp_path / "bad.json").write_text("[]")
    assert main(["report", str(tmp_path / "bad.json"), "--html", str(out)]) == 2
    assert "a run artifact is a JSON object" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_a_stored_runs_rescore_is_stored_beside_its_results(tmp_path, capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    run_id = json.loads(artifact.read_text())["run_id"]
    capsys.readouterr()
    assert main(["rescore", str(artifact)]) == 0
    out = capsys.readouterr().out
    assert "rescore: stored as assessment " in out and f"of run {run_id}, beside its" \
        " original results (unchanged)" in out
    assert main(["rescore", run_id[:6]]) == 0  # a stored run, by a prefix of its id
    assert main(["runs"]) == 0
    assert "(2 assessment(s) beside it)" in capsys.readouterr().out
    elsewhere = json.loads(artifact.read_text()) | {"run_id": "notstored001"}
    (tmp_path / "elsewhere.json").write_text(json.dumps(elsewhere))
    assert main(["rescore", str(tmp_path / "elsewhere.json")]) == 0
    assert "note: the rescore is not stored: no stored run 'notstored001'" in \
        capsys.readouterr().err
    assert main(["rescore", "nosuchrun"]) == 2
    assert "no stored run 'nosuchrun'" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_a_rescore_of_answers_the_store_never_held_is_reported_but_not_stored(tmp_path, capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    run_id = json.loads(artifact.read_text())["run_id"]
    capsys.readouterr()
    # The stored run's id on answers it never gave: rescored, but never its assessment.
    forged = json.loads(artifact.read_text())
    forged["cases"][0]["attempts"][0]["transcript"]["answer"] = \
        "You can book the Glowforge Pro tomorrow."
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert main(["rescore", str(tmp_path / "forged.json")]) == 1
    out, err = capsys.readouterr()
    assert "FAIL" in out and "stored as assessment" not in out
    case = forged["cases"][0]
    assert f"note: the rescore is not stored: 1 case(s) of the artifact differ from run" \
        f" {run_id} as the store holds it ({case['id']}#{case['repetition']})" in err
    assert main(["runs"]) == 0
    assert "assessment(s) beside it" not in capsys.readouterr().out  # nothing was kept
    # A judged verdict or a status the run never recorded is not the store's either.
    forged = json.loads(artifact.read_text())
    forged["cases"][1]["status"] = "FAIL"
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert main(["rescore", str(tmp_path / "forged.json")]) == 0
    assert "the rescore is not stored: 1 case(s) of the artifact differ" in \
        capsys.readouterr().err
    # Nor are the models the run recorded (an endpoint's run is rescored as one).
    forged = json.loads(artifact.read_text())
    forged["models"]["endpoint"] = "http://127.0.0.1:9/v1"
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    main(["rescore", str(tmp_path / "forged.json")])
    assert "the rescore is not stored: the artifact's models differ from run" in \
        capsys.readouterr().err
    # The artifact as written is the store's: its rescore is kept.
    assert main(["rescore", str(artifact)]) == 0
    assert f"of run {run_id}, beside its original results" in capsys.readouterr().out


@pytest.mark.usefixtures("cli")
def test_a_rescore_the_store_cannot_keep_is_still_reported(tmp_path, capsys, monkeypatch):
    import evals.api.assess as report_command
    from evals.record.store import StoreUnavailable

    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    capsys.readouterr()

    async def down(store, assessment):
        raise StoreUnavailable("the run store (database x on y) is down (no answer)")

    monkeypatch.setattr(report_command, "save_assessment", down)
    assert main(["rescore", str(artifact)]) == 0
    out, err = capsys.readouterr()
    assert "PASS" in out and "stored as assessment" not in out
    assert "warning: the rescore is not stored: the run store (database x on y) is down" in err
