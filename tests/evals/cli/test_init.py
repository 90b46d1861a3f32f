"""`main`: a command dispatched by name (no command is a run), and every refusal an exit 2
with its message on stderr, never a traceback."""

import pytest

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


def test_started_is_called_once_the_command_is_read_and_before_it_runs(monkeypatch, capsys):
    import evals.cli.run as run_module

    said = []
    monkeypatch.setattr(run_module, "run_command", lambda args: said.append("ran") or 0)
    with cli_environment(monkeypatch, {}):
        assert main(["run"], started=lambda: said.append("started")) == 0
        assert main(["run", "--concurrency", "0"], started=lambda: said.append("no")) == 2
        assert main(["--help"], started=lambda: said.append("no")) == 0
    assert said == ["started", "ran"]
    capsys.readouterr()


def test_flags_without_a_command_are_a_run(capsys):
    assert main(["--cases", "nope"]) == 2
    assert "unknown 'nope'. Case and scenario files:" in capsys.readouterr().err


def test_help_and_a_mistyped_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m evals") and "point save NAME" in out
    assert main(["compair", "base"]) == 2
    assert "invalid choice: 'compair'" in capsys.readouterr().err


def test_each_command_is_registered_by_the_group_the_table_names():
    import argparse

    from evals.cli import COMMANDS, group

    for name in dict.fromkeys(COMMANDS.values()):
        p = argparse.ArgumentParser()
        sub = p.add_subparsers(dest="command")
        group(name).register(sub)
        assert {c: name for c in sub.choices} == {c: g for c, g in COMMANDS.items()
                                                  if g == name}


def test_a_command_imports_its_own_group_only():
    import subprocess
    import sys

    from app.settings import PROJECT_ROOT

    probe = ("import sys; from evals.cli import main; main(['settings']);"
             " print(sorted(m for m in sys.modules if m.startswith(('evals.cli.', 'evals.api.'))"
             " or m in ('evals.workspace', 'evals.execute')))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    loaded = done.stdout.strip().splitlines()[-1]
    assert "evals.cli.settings" in loaded
    for heavy in ("evals.cli.run", "evals.cli.authoring", "evals.api.runs", "evals.execute",
                  "evals.workspace"):
        assert f"'{heavy}'" not in loaded, loaded


@pytest.mark.slow
def test_the_run_command_imports_no_model_or_reader_it_may_not_use():
    """Start-up: the run command's modules leave the parser (spaCy), the language detector
    (lingua), the embedder (onnxruntime, numpy), presidio, pypdf and the web server (uvicorn,
    Starlette: the manual server an endpoint run does not start) to the step that uses them.
    A fresh process: this one has imported them all by now."""
    import subprocess
    import sys

    heavy = ("spacy", "lingua", "onnxruntime", "numpy", "presidio_analyzer", "pypdf", "uvicorn",
             "starlette")
    code = ("import sys, evals.cli.run, evals.api.runs, evals.execute;"
            f" print(' '.join(m for m in {heavy!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


@pytest.mark.slow
def test_the_command_line_starts_without_httpx_s_own_command_line():
    """httpx, which a run uses, is imported; its command-line client (click, rich) is not."""
    import subprocess
    import sys

    from app.settings import PROJECT_ROOT

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "evals", "run", "--help"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "httpx" in imported
    assert not imported & {"click", "rich", "pygments"}, imported

