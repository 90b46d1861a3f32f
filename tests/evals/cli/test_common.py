import argparse

import pytest

from evals.cli.common import positive, progress_bar


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

    import evals.cli.common as common
    from evals.cli.common import RunOptions, with_models
    from evals.record.fingerprint import Selection
    from tests.evals.helpers import cli_environment

    @contextmanager
    def started(settings, needed, say=print):
        yield settings.model_copy(update={"local_model_url": "http://127.0.0.1:1"}) \
            if needed else settings

    monkeypatch.setattr(common, "local_model_settings", started)
    seen = []

    async def body(settings, options):
        seen.append(options.concurrency)
        return 0

    with cli_environment(monkeypatch, {"LOCAL_MODEL_PARALLEL": "3"}):
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            monkeypatch.delenv(key, raising=False)
        options = RunOptions(selection=Selection(), model=chat, concurrency=asked)
        assert with_models(options, [], [chat], body) == 0
    assert seen == [concurrency]
