"""`python -m evals resume` takes the run's lock in the store: a second one, while the first
runs it, is refused naming the holder's pid and host; the lock goes when the resume ends."""

import asyncio
import json
import os
import socket
import subprocess
import sys

import pytest

from evals.cli import main
from evals.record.store import RunStore
from tests.evals.cli.helpers import SELECTION, change_fragment
from tests.evals.record.helpers import unfinished_copy


def stored(call):
    async def body():
        async with RunStore.open(os.environ["DATABASE_URL"]) as store:
            return await call(store)
    return asyncio.run(body())


@pytest.mark.usefixtures("cli")
def test_a_second_resume_is_refused_naming_the_holder(capsys, tmp_path):
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--repeat", "2", "--artifact", str(artifact)]) == 0
    # as a stopped run leaves it: its second repetition undone
    run_id = unfinished_copy(os.environ["DATABASE_URL"], json.loads(artifact.read_text())[
        "run_id"], lambda c: c.repetition != 2, status="interrupted")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stored(lambda store: store.lock_run(run_id, pid=holder.pid))
        capsys.readouterr()
        assert main(["resume", run_id, "--artifact", str(artifact)]) == 2
        err = capsys.readouterr().err
        assert f"cannot resume: run {run_id} is being written by process {holder.pid} on" \
               f" {socket.gethostname()}" in err
        assert (stored(lambda store: store.load_run(run_id))).status == "interrupted"
    finally:
        holder.kill()
        holder.wait()
    # its holder is dead: the next resume takes the lock over, runs the rest, and lets go
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 0
    assert "resuming run" in capsys.readouterr().out
    assert (stored(lambda store: store.load_run(run_id))).status == "complete"
    assert stored(lambda store: store.run_lock(run_id)) is None



@pytest.mark.usefixtures("cli")
def test_a_refused_resume_leaves_no_lock_and_a_lost_release_is_a_warning(capsys, tmp_path,
                                                                         monkeypatch):
    import evals.api.rerun as resume_module

    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    run_id = json.loads(artifact.read_text())["run_id"]
    assert main(["resume", run_id]) == 2  # complete: nothing to resume
    assert "nothing to resume" in capsys.readouterr().err
    assert stored(lambda store: store.run_lock(run_id)) is None

    run_id = unfinished_copy(os.environ["DATABASE_URL"], run_id, lambda c: True,
                             status="interrupted")

    async def store_gone(settings, run_id):
        raise OSError("connection refused")

    monkeypatch.setattr(resume_module, "_unlock", store_gone)
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 0
    err = capsys.readouterr().err
    assert f"warning: run {run_id}: its lock was not released (OSError: connection refused)" \
        in err


def interrupted_run(tmp_path):
    """A run of SELECTION twice, stopped with its second repetition undone."""
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--repeat", "2", "--artifact", str(artifact)]) == 0
    return artifact, unfinished_copy(os.environ["DATABASE_URL"], json.loads(
        artifact.read_text())["run_id"], lambda c: c.repetition != 2, status="interrupted")


def test_a_resumed_run_finishes_at_the_settings_it_began_with(cli, capsys, tmp_path,
                                                              monkeypatch):
    from app.settings import get_settings

    monkeypatch.setenv("MODEL_TEMPERATURE", "0.2")
    get_settings.cache_clear()
    artifact, run_id = interrupted_run(tmp_path)
    monkeypatch.setenv("MODEL_TEMPERATURE", "0.7")
    get_settings.cache_clear()
    cli.clear()
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 0
    assert {b.get("temperature") for b in cli} == {0.2} and len(cli) == 2
    assert stored(lambda store: store.load_run(run_id)).status == "complete"


def test_a_run_is_not_resumed_by_an_agent_told_otherwise(cli, capsys, tmp_path, monkeypatch):
    artifact, run_id = interrupted_run(tmp_path)
    change_fragment(monkeypatch)
    cli.clear()
    capsys.readouterr()
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert f"run {run_id} began with another agent: what the assistant is told in" \
           " anonymous / demo has changed since" in err
    assert "check that version out to finish it, or start a new run" in err
    assert cli == []  # no model was asked
    assert stored(lambda store: store.load_run(run_id)).status == "interrupted"
    assert json.loads(artifact.read_text())["status"] == "interrupted"
    assert stored(lambda store: store.run_lock(run_id)) is None


def test_a_resume_after_a_store_outage_keeps_what_only_the_artifact_held(cli, capsys, tmp_path,
                                                                       monkeypatch):
    import psycopg

    from evals.record.store import writer

    artifact = tmp_path / "run.json"
    real_write = writer.CaseWriter._write

    async def down_for_one_case(self, batch):
        # the store takes every case but no-cnc-router's: its write fails as a lost server's
        await real_write(self, [(run, r) for run, r in batch if r.id != "no-cnc-router"])
        if any(r.id == "no-cnc-router" for _, r in batch):
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return []

    with monkeypatch.context() as m:
        m.setattr(writer.CaseWriter, "_write", down_for_one_case)
        m.setattr(writer, "FLUSH_TIMEOUT_S", 0.5)
        assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 1
    run_id = json.loads(artifact.read_text())["run_id"]
    kept = {c["id"]: c for c in json.loads(artifact.read_text())["cases"]}
    assert sorted(kept) == ["no-cnc-router", "no-glowforge"]
    assert [c.id for c in stored(lambda store: store.load_run(run_id)).cases] == \
        ["no-glowforge"]
    capsys.readouterr()
    cli.clear()
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 0  # no runs --import first
    out = capsys.readouterr().out
    assert f"resume: 1 finished case(s) of run {run_id} that the store lacked are put in it" \
        f" from {artifact}, not run again" in out
    assert cli == []  # nothing the artifact held was asked of the model again
    run = stored(lambda store: store.load_run(run_id))
    assert run.status == "complete" and sorted(c.id for c in run.cases) == sorted(kept)
    # the result kept is the one the run made, in the store and in the rewritten artifact
    again = {c["id"]: c for c in json.loads(artifact.read_text())["cases"]}
    assert again["no-cnc-router"] == kept["no-cnc-router"]
    assert json.loads(next(c for c in run.cases if c.id == "no-cnc-router").model_dump_json()) \
        == kept["no-cnc-router"]


def test_a_resume_whose_artifact_differs_from_the_store_is_refused_writing_nothing(
        capsys, tmp_path, cli):
    artifact, run_id = interrupted_run(tmp_path)
    record = json.loads(artifact.read_text())
    record["run_id"] = run_id
    record["cases"][0]["attempts"][0]["transcript"]["answer"] = "Another answer."
    artifact.write_text(json.dumps(record))
    cli.clear()
    capsys.readouterr()
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert f"cannot resume: run {run_id}: 1 case(s) of the artifact differ from the stored" \
        " ones" in err
    assert cli == []
    assert len(stored(lambda store: store.load_run(run_id)).cases) == 2
    assert stored(lambda store: store.run_lock(run_id)) is None
