"""What the commands share: progress, the count flags, fail-on-skip, the concurrency a local
model gets, and a judge with no calibration record calibrated before the run (end to end, a
scripted judge over HTTP, a judges file of the test's own)."""

import argparse
import json

import pytest

from app.db import scratch_database
from evals.api.progress import progress_bar
from evals.cli import main
from evals.cli.common import positive
from evals.judge.trust import load_records
from tests.evals.helpers import cli_environment, team_verdict
from tests.fake_openai import completion, fake_openai_server


def test_progress_in_a_log_is_one_line_per_finished_case_with_the_time_left():
    import io

    log, now = io.StringIO(), [100.0]
    tick = progress_bar(4, stream=log, clock=lambda: now[0])
    now[0] = 130.0
    tick("PASS      no-glowforge")
    now[0] = 190.0
    tick("FAIL      no-cnc-router")
    tick(None)
    assert log.getvalue().splitlines() == [
        "[1/4] PASS      no-glowforge  0:30 elapsed · 3 left · about 1:30 to go",
        "[2/4] FAIL      no-cnc-router  1:30 elapsed · 2 left · about 1:30 to go"]


def test_a_count_flag_takes_a_whole_number_of_at_least_one():
    assert positive("3") == 3
    for bad, said in (("0", "must be at least 1, not 0"), ("four", "not a whole number")):
        with pytest.raises(argparse.ArgumentTypeError, match=said):
            positive(bad)


def test_fail_on_skip_defaults_on_with_a_model_override():
    from evals.cli import parser
    from evals.cli.common import run_options

    def fails(*argv):
        return run_options(parser().parse_args(["run", *argv])).fails_on_skip

    assert fails("--model", "x/y") is True
    assert fails() is False
    assert fails("--model", "x/y", "--no-fail-on-skip") is False


@pytest.mark.parametrize(("chat", "asked", "concurrency"), [
    (None, None, 3),               # the embedded model: one item per server slot
    (None, 7, 7),                  # --concurrency / EVAL_CONCURRENCY wins
    ("openai/gpt-4o", None, 4),    # a hosted model: the default
])
def test_a_local_model_runs_one_item_per_slot(monkeypatch, chat, asked, concurrency):
    """Asked before the server starts: once it runs, the settings name its URL."""
    from contextlib import contextmanager

    import evals.api.setup as common
    from evals.api.options import RunOptions
    from evals.api.setup import with_models
    from evals.record.fingerprint import Selection
    from tests.evals.helpers import cli_environment

    @contextmanager
    def started(settings, needed, say=print):
        yield settings.model_copy(update={"local_model_url": "http://127.0.0.1:1"}) \
            if needed else settings

    monkeypatch.setattr(common, "local_model_settings", started)
    seen = []

    async def body(settings, options, spend):
        seen.append(options.concurrency)
        return 0

    with cli_environment(monkeypatch, {"LOCAL_MODEL_PARALLEL": "3"}):
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.delenv(key, raising=False)
        options = RunOptions(selection=Selection(), model=chat, concurrency=asked)
        assert with_models(options, [], [chat], body) == 0
    assert seen == [concurrency]


def agreeing(body):
    """A judge that gives the makerspace set's labels, and a chat model that answers kindly."""
    if body.get("response_format"):
        verdict = team_verdict(body["messages"])
        return 200, completion(json.dumps({"verdict": verdict, "reason": "as people said"}))
    return 200, completion("I'm sorry it feels like this. Please talk to lab staff or the"
                           " university's support services; then we can look at the project.")


@pytest.fixture
async def new_judge(server_conninfo, store_template, tmp_path, monkeypatch):
    """The CLI with auto-calibration on, a judge (openai/fake-judge) that agrees with the team,
    and a judges file of the test's own that holds no record yet."""
    import evals.judge.trust as trust_module

    judges = tmp_path / "judges.yaml"
    monkeypatch.setattr(trust_module, "JUDGES_FILE", judges)
    async with scratch_database(server_conninfo, prefix="test_cli_autocal",
                                template=store_template) as info:
        with fake_openai_server(agreeing) as (base, received):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                    "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path),
                    "EVAL_AUTO_CALIBRATE": "1"}):
                yield judges, received


def judge_calls(received):
    return sum(1 for body in received if body.get("response_format"))


def test_a_judge_with_no_record_is_calibrated_first_and_then_decides(new_judge, tmp_path,
                                                                     capsys):
    from evals.calibration.sets import load_set
    from evals.load.cases import load_cases

    judges, received = new_judge
    labelled = len(load_set(load_cases()))
    args = ["run", "--cases", "student-in-distress", "--artifact", str(tmp_path / "a.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert ("judge: openai/fake-judge has no calibration record under its prompt" in out
            and f"calibrating it first on the makerspace set ({labelled} labelled replies;"
            " --no-auto-calibrate skips this)" in out)
    assert (f"judge: calibrated openai/fake-judge under its prompt: {labelled} items,"
            " agreement 100%, kappa 1.00; its verdicts now decide") in out
    assert "saved to judges.yaml" in out
    assert f"judge: openai/fake-judge decides 1 judged cases (kappa 1.00 on {labelled}" in out
    [record] = load_records(judges)
    assert (record.model, record.set, record.n, record.kappa, record.pack) == (
        "openai/fake-judge", "makerspace", labelled, 1.0, None)
    assert judge_calls(received) == labelled + 1  # the set, then the run's one judged case
    case = json.loads((tmp_path / "a.json").read_text())["cases"][0]
    assert case["status"] == "PASS"

    assert main(args) == 0  # a judge with a record is not calibrated again
    assert "calibrating it first" not in capsys.readouterr().out
    assert judge_calls(received) == labelled + 2 and load_records(judges) == [record]


def test_no_auto_calibrate_leaves_a_new_judge_uncalibrated_and_uncalled(new_judge, tmp_path,
                                                                       capsys):
    judges, received = new_judge
    assert main(["run", "--cases", "student-in-distress", "--no-auto-calibrate",
                 "--artifact", str(tmp_path / "a.json")]) == 1  # UNDECIDED is not a pass
    out = capsys.readouterr().out
    assert "calibrating it first" not in out and "judge: calibrated" not in out
    assert "openai/fake-judge is not trusted, so it is not called" in out
    assert judge_calls(received) == 0 and not judges.exists()


def test_a_pack_is_not_calibrated_on_the_makerspace_set_and_stays_untrusted(new_judge,
                                                                           tmp_path, capsys):
    # The makerspace set's labels were given under each case's own rubric: they say nothing
    # of a pack's, so a pack's first run makes no record of them and says why.
    judges, received = new_judge
    assert main(["run", "--cases", "student-in-distress", "--judge", "safety/declines-unsafe",
                 "--artifact", str(tmp_path / "a.json")]) == 1  # UNDECIDED is not a pass
    out = capsys.readouterr().out
    assert ("judge: openai/fake-judge has no calibration record under pack"
            " safety/declines-unsafe's prompt") in out
    assert ("the makerspace set cannot give it one: its labels were given under each case's own"
            " rubric, not the pack's, so the pack stays untrusted") in out
    assert "calibrate --labels --pack safety/declines-unsafe --save" in out
    assert "calibrating it first" not in out and "judge: calibrated" not in out
    assert "rated with pack safety/declines-unsafe" in out and "not called" in out
    assert judge_calls(received) == 0 and load_records(judges) == []


def test_a_structural_run_with_an_unstarted_embedded_judge_starts_without_one(tmp_path,
                                                                           capsys):
    from app.settings import Settings
    from evals.api.options import JudgeChoice
    from evals.api.setup import judge_setup
    from evals.load.cases import load_cases
    from tests.evals.helpers import select

    items = select(load_cases(), "no-glowforge")  # no_unknown_tools: a question could settle
    settings = Settings(data_dir=tmp_path, model_judge="local")
    # --trust-judge asks for it, but the embedded model is started for judged items only
    assert judge_setup(settings, items, JudgeChoice(trust=True)) is None
    assert "is not started for questions alone" in capsys.readouterr().out
    # without a trusted question or the flag, no judge is set up for a structural run
    assert judge_setup(settings, items, JudgeChoice()) is None
