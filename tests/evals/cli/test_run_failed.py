"""`run --failed [RUN]` against a real run store and a fake model: the items that did not pass in
a run (the last by default), run again as a new run linked to it; nothing failed, an unknown
run, items gone from the case files. And `run --repeat auto` and `repeat-rule` end to end."""

import asyncio
import json
import os

import pytest

from evals.cli import main
from evals.record.store import RunStore
from tests.evals.cli.helpers import ANSWER, SELECTION
from tests.evals.record.helpers import unfinished_copy

# Two cases of a file of the test's own: a banana fails the first and passes the second.
FRUIT = """
- id: no-bananas
  prompt: "Any fruit?"
  assert:
    - kind: not_contains_any
      value: ["banana"]
- id: no-cherries
  prompt: "Any fruit at all?"
  assert:
    - kind: not_contains_any
      value: ["cherry"]
"""
HALF_WRONG = "We have a banana."


def stored(call):
    async def body():
        async with RunStore.open(os.environ["DATABASE_URL"]) as store:
            return await call(store)
    return asyncio.run(body())


def run_id(artifact):
    return json.loads(artifact.read_text())["run_id"]


@pytest.mark.usefixtures("cli")
def test_the_last_runs_failures_run_again_linked_to_it(capsys, tmp_path, monkeypatch):
    artifact, cases = tmp_path / "run.json", tmp_path / "fruit.yaml"
    cases.write_text(FRUIT)
    monkeypatch.setitem(ANSWER, "text", HALF_WRONG)
    assert main(["run", str(cases), "--repeat", "2", "--artifact", str(artifact)]) == 1
    first = run_id(artifact)
    monkeypatch.setitem(ANSWER, "text", "No fruit here.")
    capsys.readouterr()
    assert main(["run", "--failed", "--artifact", str(artifact)]) == 0
    out = capsys.readouterr().out
    assert f"running again 1 item(s) that did not pass in run {first}: no-bananas" in out
    again = stored(lambda store: store.load_run(run_id(artifact)))
    assert again.settings.rerun_of == first
    assert [(r.id, r.repetition, r.status) for r in again.cases] == [
        ("no-bananas", 1, "PASS"), ("no-bananas", 2, "PASS")]  # the same repetitions
    assert again.plan.selection.names == ("no-bananas",)
    assert again.plan.selection.file == str(cases)
    assert main(["runs"]) == 0
    assert f"(re-run of {first})" in capsys.readouterr().out
    # that one had no failure: nothing to run, exit 0
    assert main(["run", "--failed", "--artifact", str(artifact)]) == 0
    assert f"run {again.run_id}: nothing failed, nothing to run again" in \
        capsys.readouterr().out
    # an explicit run (a prefix of its id) still has its failure
    assert main(["run", "--failed", first[:12], "--artifact", str(artifact)]) == 0
    assert stored(lambda store: store.load_run(run_id(artifact))).settings.rerun_of == first


@pytest.mark.usefixtures("cli")
def test_an_unknown_run_or_no_run_at_all_is_exit_2(capsys):
    assert main(["run", "--failed"]) == 2
    assert "no stored run to re-run the failures of" in capsys.readouterr().err
    assert main(["run", "--failed", "nosuchrun"]) == 2
    assert "no stored run 'nosuchrun'" in capsys.readouterr().err


def test_failed_takes_its_items_from_the_run(capsys):
    assert main(["run", "--failed", "--cases", "no-glowforge"]) == 2
    assert "run --failed takes its items from the run; leave out --cases/EVAL_CASES" in \
        capsys.readouterr().err


CASE_FILE = """
- id: gone-soon
  prompt: "Which CNC router do you have?"
  assert:
    - kind: not_contains_any
      value: ["shapeoko"]
- id: stays
  prompt: "Which CNC router do you have, really?"
  assert:
    - kind: not_contains_any
      value: ["shapeoko"]
"""


@pytest.mark.usefixtures("cli")
def test_items_gone_from_the_case_files_are_named_and_the_rest_run(capsys, tmp_path,
                                                                  monkeypatch):
    cases, artifact = tmp_path / "mine.yaml", tmp_path / "run.json"
    cases.write_text(CASE_FILE)
    monkeypatch.setitem(ANSWER, "text", "Use the Shapeoko.")
    assert main(["run", str(cases), "--artifact", str(artifact)]) == 1
    first = run_id(artifact)
    cases.write_text("- id: stays" + CASE_FILE.split("- id: stays")[1])
    capsys.readouterr()
    assert main(["run", "--failed", "--artifact", str(artifact)]) == 1  # it still fails
    captured = capsys.readouterr()
    assert f"1 item(s) of run {first} that did not pass are no longer in the case files, not" \
           " run: gone-soon" in captured.err
    again = stored(lambda store: store.load_run(run_id(artifact)))
    assert [r.id for r in again.cases] == ["stays"] and again.settings.rerun_of == first
    # none left at all: exit 2, saying so
    cases.write_text('- id: other\n  prompt: "p"\n  assert:\n    - kind: no_unknown_tools\n')
    assert main(["run", "--failed", first, "--artifact", str(artifact)]) == 2
    assert f"none of the 2 item(s) that did not pass in run {first} is in the case files" \
           " any more" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_an_auto_run_and_its_replay(capsys, tmp_path, monkeypatch):
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--repeat", "auto:4", "--artifact", str(artifact)]) == 0
    out = capsys.readouterr().out
    assert "× auto up to 4 (pass rate ≥ 0.5, exact 90% interval) repetitions" in out
    record = stored(lambda store: store.load_run(run_id(artifact)))
    assert record.plan.repeat_rule.max == 4 and record.status == "complete"
    assert sorted(r.repetition for r in record.cases) == [1, 1, 2, 2]  # settled at 2 of 4
    # an auto run is not replayed: it has no fixed K
    assert main(["repeat-rule", str(artifact)]) == 2
    assert "replaying needs a run with a fixed number of repetitions" in capsys.readouterr().err
    # a fixed run is, by id from the store or from its artifact
    assert main(["run", *SELECTION, "--repeat", "3", "--artifact", str(artifact)]) == 0
    capsys.readouterr()
    assert main(["repeat-rule", run_id(artifact)[:12]]) == 0
    assert "verdicts agree on 2 of 2 cases; repetitions 4 of 6 (67%)" in capsys.readouterr().out
    assert main(["repeat-rule", str(artifact), "--max", "9"]) == 2
    assert "the rule's MAX can be at most 3, not 9" in capsys.readouterr().err
    # EVAL_REPEAT=auto and a bad --repeat
    monkeypatch.setenv("EVAL_REPEAT", "auto")
    from evals.settings import eval_settings
    eval_settings.cache_clear()
    from evals.cli import parser
    assert parser().parse_args(["run"]).repeat.max == 5
    with pytest.raises(SystemExit):
        parser().parse_args(["run", "--repeat", "auto:1"])
    assert "auto:MAX takes a MAX from 2 to 100, not 1" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_an_interrupted_run_says_what_never_ran_and_broken_case_files_are_exit_2(
        capsys, tmp_path, monkeypatch):
    artifact, cases = tmp_path / "run.json", tmp_path / "fruit.yaml"
    cases.write_text(FRUIT)
    monkeypatch.setitem(ANSWER, "text", HALF_WRONG)
    assert main(["run", str(cases), "--repeat", "2", "--artifact", str(artifact)]) == 1
    # as a stopped run leaves it: no-cherries' second repetition undone
    first = unfinished_copy(os.environ["DATABASE_URL"], run_id(artifact),
                            lambda c: (c.id, c.repetition) != ("no-cherries", 2),
                            status="interrupted")
    cases.write_text("- id: [broken\n")
    capsys.readouterr()
    assert main(["run", "--failed", "--artifact", str(artifact)]) == 2
    assert "case files have errors:" in capsys.readouterr().err
    cases.write_text(FRUIT)
    monkeypatch.setitem(ANSWER, "text", "No fruit here.")
    assert main(["run", "--failed", "--artifact", str(artifact)]) == 0
    assert f"; 1 repetition(s) never ran (python -m evals resume {first} runs them)" in \
        capsys.readouterr().out


@pytest.mark.usefixtures("cli")
def test_a_run_without_a_plan_cannot_run_again(capsys, tmp_path, monkeypatch):
    from evals.record.run import RunRecord
    from tests.evals.report.helpers import result

    async def load_run(self, ref):
        return RunRecord(run_id="r-old", cases=[result("no-glowforge", "FAIL")])

    monkeypatch.setattr(RunStore, "load_run", load_run)
    assert main(["run", "--failed", "r-old"]) == 2
    assert "run r-old has no plan: its items cannot be run again" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_repeat_rule_on_a_run_it_cannot_read_is_exit_2(capsys, tmp_path):
    assert main(["repeat-rule", "nosuchrun"]) == 2
    assert "no stored run 'nosuchrun'" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["repeat-rule", str(broken)]) == 2
    assert "broken.json" in capsys.readouterr().err
