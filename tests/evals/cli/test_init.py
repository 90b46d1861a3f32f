"""`main`: a command dispatched by name (no command is a run), and every refusal an exit 2
with its message on stderr, never a traceback."""


from evals.cli import main
from tests.evals.helpers import cli_environment


def test_bad_concurrency_is_refused(capsys, monkeypatch):
    assert main(["run", "--cases", "no-glowforge", "--concurrency", "0"]) == 2
    assert "argument --concurrency: must be at least 1, not 0" in capsys.readouterr().err
    with cli_environment(monkeypatch, {"EVAL_CONCURRENCY": "four"}):
        assert main(["run", "--cases", "no-glowforge"]) == 2
    err = capsys.readouterr().err
    assert "EVAL_CONCURRENCY='four'" in err and "Traceback" not in err


def test_no_command_is_a_run(monkeypatch):
    import evals.cli.run as run_module

    ran = []
    monkeypatch.setattr(run_module, "run_command", lambda args: ran.append(args) or 0)
    with cli_environment(monkeypatch, {}):
        assert main([]) == 0
    [args] = ran
    assert args.command == "run" and args.cases is None and args.repeat == 1


def test_flags_without_a_command_are_a_run(capsys):
    assert main(["--cases", "nope"]) == 2
    assert "unknown 'nope'. Case and scenario files:" in capsys.readouterr().err


def test_help_and_a_mistyped_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m evals") and "point save NAME" in out
    assert main(["compair", "base"]) == 2
    assert "invalid choice: 'compair'" in capsys.readouterr().err
