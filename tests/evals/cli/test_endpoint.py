"""`run --endpoint`: a case file against any OpenAI-compatible endpoint over real HTTP, as a
run like any other: stored, repeated, with JUnit; the flags it cannot honour refused."""

import json
import textwrap

import pytest

from evals.cli import main
from tests.fake_openai import completion, fake_openai_server

CASES = textwrap.dedent("""
    - id: says-no
      prompt: "Do you have a Glowforge?"
      assert:
        - kind: not_contains_any
          value: ["yes, we have"]
""")


@pytest.mark.usefixtures("cli")
def test_an_endpoint_run_is_a_stored_repeated_run_with_junit(tmp_path, capsys):
    cases = tmp_path / "mine.yaml"
    cases.write_text(CASES)
    artifact, junit = tmp_path / "run.json", tmp_path / "junit.xml"
    with fake_openai_server(lambda b: (200, completion("No, we do not."))) as (base, got):
        code = main(["run", str(cases), "--endpoint", base, "--endpoint-model", "m",
                     "--repeat", "2", "--artifact", str(artifact), "--junit", str(junit)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS" in out and f"junit: {junit}" in out
    assert len(got) == 2 and {b["model"] for b in got} == {"m"}  # sent there, twice
    record = json.loads(artifact.read_text())
    assert record["models"]["endpoint"] == f"m at {base}"
    assert [c["repetition"] for c in record["cases"]] == [1, 2]
    assert record["agent"]["contexts"] == {}  # nothing composed: no context was told
    assert junit.read_text().startswith("<?xml")
    assert main(["runs"]) == 0
    assert f"{record['run_id']}" in capsys.readouterr().out  # stored
    assert main(["resume", record["run_id"]]) == 2  # complete, and an endpoint's anyway
    assert "nothing to resume" in capsys.readouterr().err
    assert main(["point", "save", "p", "--from-run", record["run_id"]]) == 2
    assert "it froze no agent of the app" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_an_endpoint_run_makes_no_app_environment(tmp_path, capsys, monkeypatch):
    """Nothing is composed for an endpoint: no copy of the app's database, no manual server,
    no embedder is made for it (their start-up was most of a one-case run's)."""
    from evals.execute import session

    made = []

    def no_env(*args, **kwargs):
        made.append(args)
        raise AssertionError("an endpoint run made the app's environment")

    watched = []
    real_watch = session.watch_database

    async def watch(conninfo, stop):
        watched.append(conninfo)
        await real_watch(conninfo, stop)

    opened = []
    real_open = session.RunStore.open

    def open_store(conninfo):
        opened.append(conninfo)
        return real_open(conninfo)

    monkeypatch.setattr(session, "eval_env", no_env)
    monkeypatch.setattr(session, "watch_database", watch)
    monkeypatch.setattr(session.RunStore, "open", open_store)
    cases = tmp_path / "mine.yaml"
    cases.write_text(CASES)
    with fake_openai_server(lambda b: (200, completion("No, we do not."))) as (base, got):
        code = main(["run", str(cases), "--endpoint", base, "--endpoint-model", "m",
                     "--artifact", str(tmp_path / "run.json")])
    assert code == 0, capsys.readouterr()
    assert len(got) == 1 and made == []
    # with no database of the app, the run watches its store's: a frozen store stops it too
    assert watched == opened


@pytest.mark.usefixtures("cli")
def test_eval_model_names_the_apps_model_and_is_no_refused_flag(tmp_path, capsys,
                                                                 monkeypatch):
    from evals.settings import eval_settings

    cases = tmp_path / "mine.yaml"
    cases.write_text(CASES)
    monkeypatch.setenv("EVAL_MODEL", "openai/gpt-4o")  # exported for the app's runs
    eval_settings.cache_clear()
    with fake_openai_server(lambda b: (200, completion("No, we do not."))) as (base, got):
        assert main(["run", str(cases), "--endpoint", base, "--endpoint-model", "m",
                     "--artifact", str(tmp_path / "run.json")]) == 0, capsys.readouterr().err
    assert {b["model"] for b in got} == {"m"}


@pytest.mark.parametrize("flags, refused", [
    (["--endpoint", "http://127.0.0.1:9"], "--endpoint needs --endpoint-model"),
    (["--endpoint-model", "m"], "--endpoint-model names the model an --endpoint serves"),
    (["--endpoint", "http://127.0.0.1:9", "--endpoint-model", "m", "--ray", "local:1"],
     "--ray: an endpoint run is not spread over a cluster"),
    (["--endpoint", "http://127.0.0.1:9", "--endpoint-model", "m", "--model", "openai/x"],
     "--model: an endpoint run sends its cases to --endpoint-model"),
    (["--endpoint", "http://127.0.0.1:9", "--endpoint-model", "m", "--scenarios-only"],
     "--scenarios-only: scenarios need the app"),
])
def test_a_flag_an_endpoint_run_cannot_honour_is_refused(flags, refused, tmp_path, capsys):
    cases = tmp_path / "mine.yaml"
    cases.write_text(CASES)
    assert main(["run", str(cases), *flags]) == 2
    assert refused in capsys.readouterr().err
