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
