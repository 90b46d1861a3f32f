"""`python -m evals online` on a store with no consented turn yet, and its bad input."""

import pytest

from evals.cli import main


@pytest.mark.usefixtures("cli")
def test_online_with_nothing_recorded_says_so(capsys):
    assert main(["online", "--by", "week"]) == 0
    out = capsys.readouterr().out
    assert "online: 0 consented turn(s) · 0 checked now" in out
    assert "no online verdicts yet (python -m evals online)" in out
    assert main(["online", "--limit", "0"]) == 2
    assert "--limit must be 1 to 10000, not 0" in capsys.readouterr().err
    assert main(["online", "--since", "yesterday"]) == 2
    assert "not a date (YYYY-MM-DD): 'yesterday'" in capsys.readouterr().err
    for odd in ("x", "1_0", "٣"):  # int() reads the last two as 10 and 3: not ids
        assert main(["from-conversations", "--turns", odd]) == 2
        assert f"turn ids are numbers: {odd!r}" in capsys.readouterr().err


def test_a_newest_group_flagged_worse_makes_the_exit_1(cli, capsys):
    import os

    from tests.evals.helpers import stored_online_verdicts

    stored_online_verdicts(os.environ["DATABASE_URL"])
    assert main(["online", "--trend-only", "--by", "agent"]) == 1
    out = capsys.readouterr().out
    assert "online:" not in out  # --trend-only checks nothing new
    assert "trend: 48 verdict(s) read; left out: 1 under another harness; 1 of" \
        " conversations whose consent was withdrawn" in out
    assert "FLAGGED" in out and "failing turns: 12,13" in out
