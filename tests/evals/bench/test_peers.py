"""The side-by-side bench against promptfoo and inspect_ai: what each tool is given, what each
run's record says of its items (the table is in test_peers_table.py). Nothing is installed
and no tool is started."""

import json
import sys
import types
from pathlib import Path

import pytest
import yaml

from evals.bench import peers
from evals.bench.fake_model import BENCH_ANSWER
from evals.bench.peers import (
    CONTAINS_ALL,
    EXPECTED,
    INSPECT_TASK,
    Outcome,
    inspect_header_outcome,
    inspect_job,
    judged,
    promptfoo_config,
    promptfoo_job,
    promptfoo_outcome,
    suite_cases,
    suite_job,
    suite_outcome,
)
from evals.bench.processes import Timed
from evals.load.cases import load_cases
from evals.record.artifact import write_run
from evals.record.results import CaseResult, Totals
from evals.record.run import RunRecord
from evals.settings import PROJECT_ROOT

BASE = "http://127.0.0.1:9/v1"


def test_the_fake_models_answer_passes_every_tools_check():
    assert EXPECTED in BENCH_ANSWER


def test_the_suites_case_file_loads_with_one_contains_all_check_each(tmp_path):
    path = tmp_path / "peers.yaml"
    path.write_text(yaml.safe_dump(suite_cases(3), sort_keys=False))
    cases = load_cases(path)
    assert [c.id for c in cases] == ["peers-0", "peers-1", "peers-2"]
    assert cases[2].prompt == "Which machine should I use for job 2?"
    assert [[(a.kind, a.args.value) for a in c.checks] for c in cases] == \
        [[("contains_all", [EXPECTED])]] * 3


def test_the_promptfoo_config_points_at_the_fake_and_asserts_each_reply():
    config = yaml.safe_load(yaml.safe_dump(promptfoo_config(BASE, 200)))
    assert config["prompts"] == ["Which machine should I use for job {{i}}?"]
    assert config["providers"] == [{"id": "openai:chat:fake",
                                    "config": {"apiBaseUrl": BASE, "apiKey": "bench"}}]
    assert len(config["tests"]) == 200
    assert config["tests"][199] == {"vars": {"i": 199},
                                    "assert": [{"type": "contains", "value": EXPECTED}]}


def test_the_inspect_task_builds_n_samples_that_generate_and_score_includes(monkeypatch):
    # inspect_ai is not installed here: the task runs on stand-ins that record what it built.
    made = {}

    def module(name, **attrs):
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, name, mod)

    module("inspect_ai", Task=lambda **kw: made.update(kw) or kw, task=lambda f: f)
    module("inspect_ai.dataset", Sample=lambda **kw: kw)
    module("inspect_ai.scorer", includes=lambda: "includes")
    module("inspect_ai.solver", generate=lambda: "generate")
    space: dict = {}
    exec(compile(INSPECT_TASK, "task.py", "exec"), space)
    space["bench"](n=3)
    assert made["dataset"] == [{"input": f"Which machine should I use for job {i}?",
                                "target": EXPECTED} for i in range(3)]
    assert (made["solver"], made["scorer"]) == ("generate", "includes")


def test_each_tools_command_has_no_cache_the_concurrency_and_its_own_output(tmp_path):
    env = {"PATH": "/bin", "EVAL_CASES": "lab-identity", "EVAL_REPEAT": "3"}
    ours = suite_job(200, tmp_path / "peers.yaml", BASE, 50, CONTAINS_ALL, env)
    run = ours.for_run(tmp_path / "r1")
    assert run.argv[1:] == ["-m", "evals", "run", str(tmp_path / "peers.yaml"), "--endpoint",
                            BASE, "--endpoint-model", "fake", "--concurrency", "50",
                            "--artifact", f"{tmp_path}/r1/run.json"]
    assert run.env == {"PATH": "/bin", "EVAL_CACHE": "off"}  # the user's EVAL_ settings: none
    assert run.cwd == PROJECT_ROOT
    shipped = suite_job(1, "no-glowforge", BASE, 50, "shipped", env)
    assert shipped.argv[3:6] == ["run", "--cases", "no-glowforge"]

    config = tmp_path / "pf" / "promptfooconfig.yaml"
    pf = promptfoo_job(200, Path("/peers"), config, tmp_path / "home", 50, env).for_run(
        tmp_path / "r2")
    assert pf.argv == ["/peers/node_modules/.bin/promptfoo", "eval", "-c", str(config),
                       "--no-cache", "--no-write", "-j", "50", "--no-table",
                       "-o", f"{tmp_path}/r2/results.json"]
    assert pf.env["PROMPTFOO_CONFIG_DIR"] == str(tmp_path / "home")
    assert pf.env["PROMPTFOO_DISABLE_TELEMETRY"] == pf.env["PROMPTFOO_DISABLE_UPDATE"] == "1"
    assert pf.cwd == config.parent

    task = tmp_path / "inspect" / "task.py"
    ia = inspect_job(200, Path("/peers"), task, BASE, 50, env).for_run(tmp_path / "r3")
    assert ia.argv == ["/peers/venv/bin/inspect", "eval", "task.py", "-T", "n=200", "--model",
                       "openai-api/bench/fake", "--max-connections", "50", "--display", "none"]
    assert (ia.env["BENCH_BASE_URL"], ia.env["INSPECT_LOG_DIR"], ia.cwd) == \
        (BASE, f"{tmp_path}/r3/logs", task.parent)


def record(tmp_path, statuses):
    cases = [CaseResult(id=f"peers-{i}", file="peers.yaml", prompt="p", status=s)
             for i, s in enumerate(statuses)]
    write_run(RunRecord(totals=Totals.of(cases), cases=cases), tmp_path / "run.json")


def test_the_suites_outcome_is_read_from_its_artifact(tmp_path):
    record(tmp_path, ["PASS", "PASS"])
    assert suite_outcome(0, tmp_path, 2) == Outcome(2, 2)
    assert suite_outcome(0, tmp_path, 2).ok
    record(tmp_path, ["PASS", "FAIL", "ERROR"])
    failed = suite_outcome(1, tmp_path, 3)
    assert failed == Outcome(1, 3, "exit 1, 1 ERROR, 1 FAIL") and not failed.ok
    record(tmp_path, ["PASS", "PASS", "PASS"])
    assert suite_outcome(0, tmp_path, 4) == Outcome(3, 4, "3 item(s) ran")


def test_a_suite_run_without_its_artifact_is_not_good(tmp_path):
    got = suite_outcome(2, tmp_path, 1)
    assert not got.ok and got.problem.startswith("exit 2: ") and "run.json" in got.problem


def promptfoo_results(tmp_path, successes, failures, errors):
    (tmp_path / "results.json").write_text(json.dumps({"results": {"stats": {
        "successes": successes, "failures": failures, "errors": errors}}}))


def test_promptfoos_outcome_counts_failures_and_errors(tmp_path):
    promptfoo_results(tmp_path, 200, 0, 0)
    assert promptfoo_outcome(0, tmp_path, 200).ok
    promptfoo_results(tmp_path, 197, 1, 2)
    assert promptfoo_outcome(100, tmp_path, 200) == \
        Outcome(197, 200, "exit 100, 1 failed, 2 errors")
    promptfoo_results(tmp_path, 150, 0, 0)
    assert promptfoo_outcome(0, tmp_path, 200).problem == "150 item(s) ran"
    (tmp_path / "results.json").unlink()
    assert promptfoo_outcome(1, tmp_path, 200).problem.startswith("exit 1, no results:")


def inspect_header(status, completed, accuracy):
    return json.dumps({"status": status, "results": {
        "total_samples": completed, "completed_samples": completed,
        "scores": [{"name": "includes", "metrics": {"accuracy": {"value": accuracy}}}]}})


def test_inspects_outcome_is_its_status_and_the_share_scored_correct():
    assert inspect_header_outcome(0, inspect_header("success", 200, 1.0), 200).ok
    # inspect exits 0 when every sample is scored wrong: the score is what tells.
    assert inspect_header_outcome(0, inspect_header("success", 200, 0.995), 200) == \
        Outcome(199, 200, "1 incorrect")
    assert inspect_header_outcome(1, inspect_header("error", 3, 1.0), 200) == \
        Outcome(3, 200, "exit 1, status error, 3 sample(s) completed")
    assert inspect_header_outcome(1, "", 1).problem.startswith("exit 1, unreadable log:")
    assert not inspect_header_outcome(0, json.dumps({"status": "success"}), 1).ok


def test_an_inspect_run_that_wrote_no_log_is_not_good(tmp_path):
    got = peers.inspect_outcome(1, tmp_path, 1, inspect=tmp_path / "inspect")
    assert got == Outcome(0, 1, "exit 1, 0 eval logs")


def an_eval_log(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.eval").write_bytes(b"PK")


def test_an_inspect_log_without_inspect_to_read_it_is_not_good(tmp_path):
    an_eval_log(tmp_path)
    absent = peers.inspect_outcome(0, tmp_path, 1, inspect=tmp_path / "no-inspect")
    assert not absent.ok and absent.problem.startswith("exit 0, its log not read: [Errno 2]")


@pytest.mark.slow
def test_an_inspect_log_that_inspect_cannot_dump_is_not_good(tmp_path):
    an_eval_log(tmp_path)
    failing = tmp_path / "inspect"
    failing.write_text("#!/bin/sh\nexit 4\n")
    failing.chmod(0o755)
    assert peers.inspect_outcome(0, tmp_path, 1, inspect=failing) == \
        Outcome(0, 1, "exit 0, its log not read: `inspect log dump` exit 4")


def test_a_failed_run_shows_the_end_of_its_stderr_and_a_killed_one_says_so():
    failed = Outcome(0, 1, "exit 3")
    assert judged(Timed(1, 1, 1, 3), failed, "Traceback\n  x\nValueError: no\n") == \
        Outcome(0, 1, "exit 3; stderr:   x | ValueError: no")
    assert judged(Timed(1, 1, 1, 3), failed, "") == Outcome(0, 1, "exit 3; stderr: empty")
    assert judged(Timed(1, 1, 1, 0), Outcome(1, 1), "a warning") == Outcome(1, 1)
    assert judged(Timed(300, 1, 1, -9, timed_out=True), Outcome(1, 1), "") == \
        Outcome(1, 1, "killed after 300 s")


@pytest.mark.parametrize("flag", ["--rounds", "--cases", "--concurrency"])
def test_a_count_below_one_is_refused(flag, capsys):
    with pytest.raises(SystemExit) as exited:
        peers.main([flag, "0"])
    assert exited.value.code == 2
    assert f"{flag} must be 1 or more, not 0" in capsys.readouterr().err


def test_the_bench_refuses_to_start_without_the_peers_installed(tmp_path, capsys):
    assert peers.main(["--peers", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}/node_modules/.bin/promptfoo" in err
    assert f"{tmp_path}/venv/bin/inspect" in err and "make bench-peers" in err


def test_a_relative_peers_folder_is_found_from_each_tools_own_folder(tmp_path, monkeypatch):
    # Each tool starts in a folder of its own: `--peers .data/peers` (make's) must not be
    # looked up from there.
    monkeypatch.chdir(tmp_path)
    pf = promptfoo_job(1, Path("peers"), tmp_path / "pf" / "c.yaml", tmp_path, 50, {})
    ia = inspect_job(1, Path("peers"), tmp_path / "ia" / "task.py", BASE, 50, {})
    assert pf.argv[0] == f"{tmp_path}/peers/node_modules/.bin/promptfoo"
    assert ia.argv[0] == f"{tmp_path}/peers/venv/bin/inspect"
