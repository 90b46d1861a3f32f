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
    assert main(["from-conversations", "--turns", "x"]) == 2
    assert "turn ids are numbers: 'x'" in capsys.readouterr().err
