"""The run commands in process against a real run store and a fake model over HTTP (run with
repetitions, JUnit, a cost cap and an evaluator pack; list; needs-local-model), and a run
stopped by Ctrl-C or SIGTERM in a real child process, then resumed."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from app.db import scratch_database
from app.settings import PROJECT_ROOT
from evals.cli import main
from evals.judge import MAKERSPACE
from evals.load.cases import load_cases
from evals.load.packs import load_pack_prompt
from tests.evals.cli.helpers import SELECTION, store_down_at_the_end
from tests.evals.helpers import cli_environment, select
from tests.evals.load.helpers import LAUGHS
from tests.evals.record.helpers import unfinished_copy
from tests.fake_openai import completion, fake_openai_server


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


@pytest.mark.usefixtures("cli")
def test_run_repeat_and_junit(capsys, tmp_path):
    junit = tmp_path / "junit.xml"
    assert main(["run", *SELECTION, "--repeat", "2", "--junit", str(junit),
                 "--artifact", str(tmp_path / "run.json")]) == 0
    out = capsys.readouterr().out
    assert "pass@1 1.00  pass^2 yes no-glowforge" in out
    assert "mean pass rate 1.00" in out and "run: " in out
    xml = junit.read_text()
    assert '<testcase classname="honest-absence" name="no-glowforge"' in xml
    assert 'failures="0"' in xml


def test_the_prefix_cache_says_what_it_did(tmp_path, monkeypatch):
    import evals.report.console as run_module
    from app.localmodel.prefix_cache import PrefixCache

    cache = PrefixCache(tmp_path, 10**9)
    cache.hits, cache.saves = 6, 1
    cache.failed("restore slot 0: HTTP 400")
    monkeypatch.setattr(run_module, "PREFIX_CACHES", {str(tmp_path): cache})
    assert run_module.prefix_lines() == [f"prefix cache: 6 restored from disk, 1 computed and saved"
                              f" ({tmp_path})", "prefix cache: restore slot 0: HTTP 400"]
    monkeypatch.setattr(run_module, "PREFIX_CACHES", {})
    assert run_module.prefix_lines() == []


@pytest.mark.parametrize("judge_id, visitor_id, refused", [
    ("openai/gpt-4o", "openai/gpt-4o", None),
    ("judge/unpriced", "openai/gpt-4o", "the price of judge/unpriced (the judge) is unknown"),
    ("openai/gpt-4o", "visitor/unpriced",
     "the price of visitor/unpriced (the visitor) is unknown"),
])
def test_a_cost_cap_needs_a_price_for_every_model_the_run_calls(judge_id, visitor_id,
                                                                 refused):
    import re

    from evals.api.errors import ApiError
    from evals.api.runs import cost_controls

    called = [("chat model", "openai/gpt-4o"), ("judge", judge_id), ("visitor", visitor_id)]
    if refused is None:
        assert cost_controls(0.5, called).max_cost_usd == 0.5
    else:
        with pytest.raises(ApiError, match=re.escape(refused)):
            cost_controls(0.5, called)
    # no cap, no price needed
    assert cost_controls(None, [("judge", "judge/unpriced")]).max_cost_usd is None


def answer(body):
    if body.get("response_format"):  # the judge
        return 200, completion(json.dumps({"verdict": "pass", "reason": "fine"}))
    return 200, completion("Please talk to lab staff or the university's support services.")


@pytest.fixture
async def served(server_conninfo, store_template, tmp_path, monkeypatch):
    async with scratch_database(server_conninfo, prefix="test_packs",
                                template=store_template) as info:
        with fake_openai_server(answer) as (base, received):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                    "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path)}):
                yield received


def test_a_pack_replaces_the_rubric_and_is_recorded(served, tmp_path, capsys):
    artifact = tmp_path / "run.json"
    main(["run", "--cases", "student-in-distress", "--judge", "safety/puts-people-first",
          "--advisory-judge", "--artifact", str(artifact)])
    out = capsys.readouterr().out
    pack = load_pack_prompt("safety/puts-people-first")
    asked = [m["content"] for b in served if b.get("response_format") for m in b["messages"]
             if m["role"] == "user"]
    record = json.loads(artifact.read_text())
    check = record["cases"][0]["attempts"][0]["checks"][-1]
    assert "rated with pack safety/puts-people-first" in out
    assert asked and all(pack.rubric in a for a in asked)
    assert not any("Replies kindly and takes what the student said seriously" in a
                   for a in asked)  # the case's own rubric is not asked
    assert record["settings"]["judge_pack"] == "safety/puts-people-first"
    assert record["settings"]["judge_prompt_hash"] == pack.hash(MAKERSPACE.hash())
    assert check["judge"]["pack"] == "safety/puts-people-first"
    assert check["judge"]["prompt_hash"] == pack.hash(MAKERSPACE.hash())
    assert record["plan"]["judge"]["prompt_hash"] == pack.hash(MAKERSPACE.hash())


def test_an_unknown_pack_stops_the_run_before_it_starts(served, capsys):
    assert main(["run", "--cases", "student-in-distress", "--judge", "nope/x"]) == 2
    assert "cannot start: --judge 'nope/x'" in capsys.readouterr().err
    assert served == []


def test_the_cli_exits_2_with_the_error_not_a_traceback(tmp_path, capsys):
    (tmp_path / "c.yaml").write_bytes(LAUGHS.encode())
    assert main(["run", str(tmp_path), "--artifact", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert "case files have errors:" in err and "Traceback" not in err


ROOT = PROJECT_ROOT
CASES = "honest-absence,lab-identity"
ITEMS = len(select(load_cases(), CASES))


def slow(body):
    return 0.3, completion("We don't have that machine here.")


def child_env(info, base, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "EVAL_"))}
    env.update({"DATABASE_URL": info, "MODEL_CHAT": "openai/fake", "MODEL_API_BASE": base,
                "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path / "data"),
                "EVAL_CONCURRENCY": "1", "PYTHONWARNINGS": "ignore"})
    return env


@contextmanager
def scratch(server_conninfo, template):
    """A run-store database for a command (or its child process) to use, a copy of the
    migrated `template`; dropped afterwards."""
    name = f"test_stop_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_conninfo, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield make_conninfo(server_conninfo, dbname=name)
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def wait_for_a_stored_case(info, deadline_s=90):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        with psycopg.connect(info) as conn:
            try:
                n = conn.execute("SELECT count(*) FROM eval_cases").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                n = 0
        if n:
            return
        time.sleep(0.2)
    raise AssertionError("no case was stored in time")


def resume_here(monkeypatch, env, artifact):
    """`python -m evals resume` in this process, in the environment the stopped child had."""
    from app.settings import get_settings
    from evals.settings import eval_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        if name.startswith(("MODEL_", "EVAL_")) or name in (
                "DATABASE_URL", "DATA_DIR", "OPENAI_API_KEY"):
            monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    eval_settings.cache_clear()
    try:
        return main(["resume", "--artifact", str(artifact)])
    finally:
        get_settings.cache_clear()
        eval_settings.cache_clear()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_keeps_what_finished_and_leaves_nothing(server_conninfo, store_template,
                                                              tmp_path, sig, monkeypatch,
                                                              capsys):
    artifact = tmp_path / "run.json"
    with scratch(server_conninfo, store_template) as info:
        with fake_openai_server(slow) as (base, _):
            env = child_env(info, base, tmp_path)
            child = subprocess.Popen(
                [sys.executable, "-m", "evals", "run", "--cases", CASES,
                 "--artifact", str(artifact)], cwd=ROOT, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                wait_for_a_stored_case(info)
                child.send_signal(sig)
                out, err = child.communicate(timeout=60)
            finally:
                child.kill()
            assert child.returncode == 128 + int(sig), err
            assert f"{sig.name}: stopping" in err and "python -m evals resume" in err
            record = json.loads(artifact.read_text())
            assert record["status"] == "interrupted" and record["unfinished"]
            assert len(record["cases"]) + len(record["unfinished"]) == ITEMS
            with psycopg.connect(info) as conn:
                status = conn.execute("SELECT status FROM eval_runs").fetchone()[0]
            assert status == "interrupted"
            with psycopg.connect(server_conninfo) as conn:
                left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                    (f"eval\\_p{child.pid}\\_%",)).fetchall()
            assert left == []
            assert not list(Path("/tmp").glob(f"eval-blobs-p{child.pid}-*"))
            if sig == signal.SIGTERM:  # resumed here: only the stop needs a process of its own
                code = resume_here(monkeypatch, env, artifact)
                said = capsys.readouterr()
                assert "resuming run" in said.out, said
                assert code in (0, 1), said  # what the cases gave, not an error (2)
                done = json.loads(artifact.read_text())
                assert done["status"] == "complete" and done["unfinished"] == []
                assert done["run_id"] == record["run_id"] and len(done["cases"]) == ITEMS


@contextmanager
def _cli_with(monkeypatch, info, tmp_path, handler):
    with fake_openai_server(handler) as (base, received):
        with cli_environment(monkeypatch, {
                "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat", "MODEL_API_BASE": base,
                "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path),
                "EVAL_CONCURRENCY": "1"}):
            yield received


def _cases_in(path):
    try:
        return [c["id"] for c in json.loads(path.read_text()).get("cases", [])]
    except (OSError, ValueError):
        return None


def _noting_the_artifact(artifact, seen, wait_s=0.0):
    """A model that notes the artifact's cases in `seen` at every call, then answers; with
    `wait_s`, once the file holds a case for each call before it (or `wait_s` has passed)."""
    def handler(body):
        deadline = time.monotonic() + wait_s
        while len(_cases_in(artifact) or []) < len(seen) and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append(_cases_in(artifact))
        return 200, completion("We don't have a Glowforge or a CNC router here.")
    return handler


def test_the_artifact_holds_every_finished_case_while_the_run_goes(
        server_conninfo, store_template, tmp_path, monkeypatch):
    artifact = tmp_path / "run.json"
    seen = []
    # A finished case is in the file while the run goes: the second case's model call sees
    # the first there (written before the store's writer writes its batch, which it gathers
    # for WRITE_GATHER_S; waited for here, as a loaded machine may take longer).
    handler = _noting_the_artifact(artifact, seen, wait_s=30.0)
    with scratch(server_conninfo, store_template) as info:
        with _cli_with(monkeypatch, info, tmp_path, handler):
            main(["run", *SELECTION, "--artifact", str(artifact)])
    assert seen[0] == [] and len(seen[-1]) == 1, seen


def test_runs_import_puts_an_artifacts_run_in_a_store_that_missed_it(
        server_conninfo, store_template, tmp_path, monkeypatch, capsys):
    artifact = tmp_path / "run.json"
    answer = completion("We don't have a Glowforge or a CNC router here.")
    with scratch(server_conninfo, store_template) as first, \
            scratch(server_conninfo, store_template) as other:
        with _cli_with(monkeypatch, first, tmp_path, lambda body: (200, answer)):
            main(["run", *SELECTION, "--artifact", str(artifact)])
        run_id = json.loads(artifact.read_text())["run_id"]
        capsys.readouterr()
        with _cli_with(monkeypatch, other, tmp_path, lambda body: (200, answer)):
            assert main(["runs", "--import", str(artifact)]) == 0
            out = capsys.readouterr().out
            assert f"imported run {run_id} (complete): 2 case(s)" in out
            assert f"{run_id}" in out.splitlines()[-1] and "complete" in out.splitlines()[-1]
            # importing again adds nothing: the stored cases are kept as they are
            assert main(["runs", "--import", str(artifact)]) == 0
            assert f"imported run {run_id} (complete): 0 case(s) from {artifact}; 2 the store" \
                " held already, kept as stored" in capsys.readouterr().out
        with psycopg.connect(other) as conn:
            n = conn.execute("SELECT count(*) FROM eval_cases WHERE run_id = %s",
                             (run_id,)).fetchone()[0]
        assert n == 2
        changed = json.loads(artifact.read_text())
        changed["cases"][0]["attempts"][0]["transcript"]["answer"] = "Another answer."
        (tmp_path / "changed.json").write_text(json.dumps(changed))
        with _cli_with(monkeypatch, other, tmp_path, lambda body: (200, answer)):
            assert main(["runs", "--import", str(tmp_path / "changed.json")]) == 2
        assert f"run {run_id}: 1 case(s) of the artifact differ from the stored ones" \
            " (no-glowforge#1); a stored result is never rewritten, so nothing was imported" \
            in capsys.readouterr().err
        stale = json.loads(artifact.read_text()) | {"status": "interrupted"}
        (tmp_path / "stale.json").write_text(json.dumps(stale))
        with _cli_with(monkeypatch, other, tmp_path, lambda body: (200, answer)):
            assert main(["runs", "--import", str(tmp_path / "stale.json")]) == 2
        assert f"run {run_id} is complete in the store" in capsys.readouterr().err
        with psycopg.connect(other, autocommit=True) as conn:  # a live writer holds the run
            conn.execute("INSERT INTO eval_run_locks (run_id, pid, host) VALUES (%s, %s, %s)",
                         (run_id, 1, "elsewhere"))
        with _cli_with(monkeypatch, other, tmp_path, lambda body: (200, answer)):
            assert main(["runs", "--import", str(artifact)]) == 2
        assert "is being written by process 1 on elsewhere" in capsys.readouterr().err
        bad = tmp_path / "bad.json"
        bad.write_text("[1]")
        with _cli_with(monkeypatch, other, tmp_path, lambda body: (200, answer)):
            assert main(["runs", "--import", str(bad)]) == 2
        assert "bad.json: a run artifact is a JSON object" in capsys.readouterr().err


def test_resume_rebuilds_the_artifact_from_the_store_before_it_runs_anything(
        server_conninfo, store_template, tmp_path, monkeypatch):
    artifact = tmp_path / "run.json"
    seen = []
    handler = _noting_the_artifact(artifact, seen)
    with scratch(server_conninfo, store_template) as info:
        with _cli_with(monkeypatch, info, tmp_path, handler):
            main(["run", *SELECTION, "--artifact", str(artifact)])
            # As a run killed with SIGKILL leaves it: one case stored, the run still
            # "running" under a process that is gone, the artifact stale.
            run_id = unfinished_copy(info, json.loads(artifact.read_text())["run_id"],
                                     lambda c: c.id != "no-cnc-router", pid=999999999)
            artifact.write_text('{"status": "running", "cases": []}')
            seen.clear()
            assert main(["resume", run_id,
                                                  "--artifact", str(artifact)]) == 0
    assert seen == [["no-glowforge"]]
    assert sorted(_cases_in(artifact)) == ["no-cnc-router", "no-glowforge"]


@pytest.mark.usefixtures("cli")
def test_a_store_still_down_at_the_end_is_one_error_line_and_a_non_zero_exit(
        capsys, tmp_path, monkeypatch):
    store_down_at_the_end(monkeypatch)
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 1
    out, err = capsys.readouterr()
    assert "(not all stored)" in out and "2/2 passed" in out
    assert f"python -m evals runs --import {artifact} puts them there" in err
    assert "Traceback" not in err and len(json.loads(artifact.read_text())["cases"]) == 2


def test_a_visitor_s_settings_are_part_of_the_plan():
    # Two visitors of one model id at different temperatures are two plans.
    from app.chat.models import LiteLLMModel
    from evals.api.runs import plan_for
    from evals.load.conversations import conversations
    from evals.load.scenarios import load_scenarios

    scenarios, shared = load_scenarios()
    talks = conversations(scenarios, shared, full=False)[:2]

    def visitor(temperature):
        return LiteLLMModel("anthropic/claude-haiku-4-5", api_base=None,
                            api_key="sk-secret-visitor", timeout_s=10, retries=0,
                            temperature=temperature)

    cool, warm = (plan_for(talks, None, 1, None, visitor=visitor(t)) for t in (0.0, 1.5))
    assert cool.fingerprint != warm.fingerprint
    assert [c.split(" (")[0] for c in warm.changes_since(cool)] == [
        "simulated visitor's settings changed"]
    assert "sk-secret-visitor" not in cool.model_dump_json()  # the key is not part of it


@pytest.mark.parametrize(("lasts", "code", "status"), [(2, 0, "PASS"), (1000, 1, "ERROR")])
def test_a_judge_storm_flips_no_verdict_and_one_that_outlasts_the_tries_fails_the_exit(
        server_conninfo, store_template, tmp_path, monkeypatch, capsys, lasts, code, status):
    judged: list[dict] = []

    def storm(body):
        if body.get("response_format"):  # the judge: 429 for the storm's length
            judged.append(body)
            if len(judged) <= lasts:
                return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
            return 200, completion(json.dumps({"verdict": "pass", "reason": "kind"}))
        return 200, completion("Please talk to lab staff or the university's support"
                               " services; I can help with the lab.")

    async def run():
        async with scratch_database(server_conninfo, prefix="test_storm",
                                    template=store_template) as info:
            with fake_openai_server(storm) as (base, received), cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                    "MODEL_RETRIES": "1", "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path)}):
                # main runs its own event loop: off this one's thread
                exit_code = await asyncio.to_thread(
                    main, ["run", "--cases", "student-in-distress", "--trust-judge",
                           "--artifact", str(tmp_path / "run.json")])
                return exit_code, received

    exit_code, received = asyncio.run(run())
    out = capsys.readouterr().out
    [case] = json.loads((tmp_path / "run.json").read_text())["cases"]
    assert case["status"] == status and exit_code == code
    assert sum(not b.get("response_format") for b in received) == 1  # one answer, judged
    if status == "ERROR":
        assert "the judge's call (openai/fake-judge)" in out
