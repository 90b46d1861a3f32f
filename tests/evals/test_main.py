import json

from evals.__main__ import main


def test_list_prints_every_case(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "honest-absence.yaml" in out and "no-glowforge" in out


def test_unknown_selection_is_exit_2_listing_the_valid_names(capsys):
    assert main(["run", "--cases", "nope"]) == 2
    assert "unknown 'nope'. Files:" in capsys.readouterr().err


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


def test_bad_concurrency_is_refused(capsys):
    assert main(["run", "--cases", "no-glowforge", "--concurrency", "0"]) == 2


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
    assert "  FAIL    no-glowforge" in out and "Glowforge" in out
