"""`main`: a command dispatched by name (none is `run`), and every refusal an exit 2 with one
line on stderr, never a traceback."""

from evals.cli import main
from tests.evals.helpers import cli_environment


def test_bad_concurrency_is_refused(capsys, monkeypatch):
    assert main(["run", "--cases", "no-glowforge", "--concurrency", "0"]) == 2
    assert "argument --concurrency: must be at least 1, not 0" in capsys.readouterr().err
    with cli_environment(monkeypatch, {"EVAL_CONCURRENCY": "four"}):
        assert main(["run", "--cases", "no-glowforge"]) == 2
    err = capsys.readouterr().err
    assert "EVAL_CONCURRENCY='four'" in err and "Traceback" not in err
