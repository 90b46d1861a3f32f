"""`python -m evals` ends without Python's teardown: after every exit handler, with its
output flushed and its status kept."""

import io
import subprocess
import sys

import pytest

from evals import _exit


def test_the_process_ends_after_every_exit_handler_with_its_status(monkeypatch):
    registered, ended = [], []
    monkeypatch.setattr(_exit.atexit, "register", registered.append)
    monkeypatch.setattr(_exit.os, "_exit", ended.append)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    status = _exit.skip_teardown()
    assert len(registered) == 1 and ended == []
    print("buffered", end="")
    registered[0]()
    assert ended == [1]  # an exception out of main: Python's own status for it
    status.code = 2
    registered[0]()
    assert ended == [1, 2] and out.getvalue() == "buffered"


def test_a_closed_output_does_not_keep_the_process_from_ending(monkeypatch):
    registered, ended = [], []
    monkeypatch.setattr(_exit.atexit, "register", registered.append)
    monkeypatch.setattr(_exit.os, "_exit", ended.append)
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdout", closed)
    _exit.skip_teardown().code = 0
    registered[0]()
    assert ended == [0]


@pytest.mark.slow
def test_the_command_line_says_all_it_has_and_exits_with_its_status():
    shown = subprocess.run([sys.executable, "-m", "evals", "--help"], capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "usage: python -m evals" in shown.stdout and "docs/settings.md" in shown.stdout
    wrong = subprocess.run([sys.executable, "-m", "evals", "no-such-command"],
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr


@pytest.mark.parametrize("variable", ["COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"])
def test_a_process_coverage_measures_ends_as_python_ends_it(monkeypatch, variable):
    registered = []
    monkeypatch.setattr(_exit.atexit, "register", registered.append)
    monkeypatch.setenv(variable, "pyproject.toml")
    _exit.skip_teardown().code = 0
    assert registered == []  # coverage's own exit handler, registered first, must run
