import asyncio
import json

from evals.cli import main
from tests.evals.helpers import cli_environment


def test_list_prints_every_case(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "honest-absence.yaml" in out and "no-glowforge" in out


def test_unknown_selection_is_exit_2_listing_the_valid_names(capsys):
    assert main(["run", "--cases", "nope"]) == 2
    assert "unknown 'nope'. Case and scenario files:" in capsys.readouterr().err


def test_without_a_provider_the_local_model_is_used_and_its_failure_is_one_line(
        capsys, monkeypatch):
    for var in ("MODEL_CHAT", "EVAL_MODEL", "MODEL_API_BASE", "OPENAI_API_KEY",
                "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LOCAL_MODEL", "no-such-model")  # fails before anything is started
    from app.settings import get_settings
    get_settings.cache_clear()
    try:
        assert main(["run", "--cases", "no-glowforge"]) == 2
    finally:
        get_settings.cache_clear()
    assert "local model: unknown LOCAL_MODEL 'no-such-model'" in capsys.readouterr().err


def test_bad_concurrency_is_refused(capsys, monkeypatch):
    assert main(["run", "--cases", "no-glowforge", "--concurrency", "0"]) == 2
    assert "argument --concurrency: must be at least 1, not 0" in capsys.readouterr().err
    with cli_environment(monkeypatch, {"EVAL_CONCURRENCY": "four"}):
        assert main(["run", "--cases", "no-glowforge"]) == 2
    err = capsys.readouterr().err
    assert "EVAL_CONCURRENCY='four'" in err and "Traceback" not in err


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


def test_fail_on_skip_defaults_on_with_a_model_override():
    from evals.cli import parser
    from evals.cli.common import run_options

    def fails(*argv):
        return run_options(parser().parse_args(["run", *argv])).fails_on_skip

    assert fails("--model", "x/y") is True
    assert fails() is False
    assert fails("--model", "x/y", "--no-fail-on-skip") is False


def test_accuracy_passes_on_the_shipped_corpus_and_fails_on_a_wrong_label(tmp_path, capsys):
    assert main(["accuracy"]) == 0
    out = capsys.readouterr().out
    assert "100.0%" in out.splitlines()[-1] or "all" in out
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text('- answer: "You can use the Glowforge."\n  check: {kind: no_unknown_tools}\n'
                     '  verdict: pass\n  adversarial: false\n  why: "deliberately wrong"\n')
    assert main(["accuracy", str(wrong)]) == 1
    captured = capsys.readouterr()
    assert "≠ wrong.yaml:1 no_unknown_tools: labelled pass, check says fail" in captured.out
    assert "agreement 0.0% is below 100.0%" in captured.err
    wrong.write_text('- answer: "x"\n  check: {kind: no_such_kind}\n  verdict: pass\n'
                     '  adversarial: false\n  why: ""\n')
    assert main(["accuracy", str(wrong)]) == 2
    assert "wrong.yaml:1: unknown assertion kind 'no_such_kind'" in capsys.readouterr().err


def test_rescore_keeps_repetitions_and_cannot_judge_a_newly_judged_case(tmp_path, capsys):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "honest-absence.yaml").write_text(
        '- id: no-glowforge\n  prompt: "p"\n  rubric: "Says the lab has no Glowforge."\n')
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"cases": [
        {"id": "no-glowforge", "file": "honest-absence.yaml", "prompt": "p", "status": "PASS",
         "repetition": r, "attempts": [{"answer": "We don't have a Glowforge."}]}
        for r in (1, 2)]}))
    from evals.load.cases import load_cases_by_file
    from evals.record.artifact import read_run as load_artifact
    from evals.report.rescore import rescore

    results = asyncio.run(rescore(load_artifact(path), load_cases_by_file(cases)[0]))
    assert [(r.repetition, r.status) for r in results] == [(1, "UNDECIDED"), (2, "UNDECIDED")]
    assert "a rescore cannot judge it" in results[0].attempts[0].checks[-1].reason


def test_make_eval_asks_whether_the_embedded_model_is_needed(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "LOCAL_MODEL_URL"):
        monkeypatch.delenv(var, raising=False)
    hosted = "anthropic/claude-sonnet-4-5"
    with cli_environment(monkeypatch, {}):
        assert main(["needs-local-model"]) == 0
    with cli_environment(monkeypatch, {"EVAL_MODEL": hosted}):
        assert main(["needs-local-model"]) == 0  # the judge still is
    with cli_environment(monkeypatch, {"EVAL_MODEL": hosted, "EVAL_JUDGE_MODEL": hosted}):
        assert main(["needs-local-model"]) == 0  # the scenarios' visitor still is
    with cli_environment(monkeypatch, {"EVAL_MODEL": hosted, "EVAL_JUDGE_MODEL": hosted,
                                       "MODEL_SIM_USER": hosted}):
        assert main(["needs-local-model"]) == 1
