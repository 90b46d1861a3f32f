"""Runs started from the workspace: the CLI in a child process, found in the store by its
launch id, one at a time, and stopped as Ctrl-C stops it (what finished is kept)."""

import asyncio
import os

import pytest

from app.db import scratch_database
from evals.record.store import RunStore
from evals.workspace.launch import Launcher, LaunchError, Request
from tests.fake_openai import completion, fake_openai_server

pytestmark = pytest.mark.slow  # the launcher starts the CLI in a child process


def slow(body):
    return 0.4, completion("We don't have that machine here.")


async def test_a_launched_run_is_followed_by_its_launch_id_and_stops_gracefully(
        server_conninfo, tmp_path):
    async with scratch_database(server_conninfo, prefix="test_launch") as info:
        with fake_openai_server(slow) as (model, _):
            env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "EVAL_"))}
            env.update({"DATABASE_URL": info, "MODEL_CHAT": "openai/fake",
                        "MODEL_API_BASE": model, "OPENAI_API_KEY": "sk-test",
                        "DATA_DIR": str(tmp_path / "data"), "EVAL_CONCURRENCY": "1",
                        "PYTHONWARNINGS": "ignore"})
            launcher = Launcher(env=env, artifacts=tmp_path / "runs")
            job = launcher.start(Request(names=("honest-absence", "lab-identity"),
                                         kinds="cases"), "two files")
            with pytest.raises(LaunchError, match="a run is under way"):
                launcher.start(Request(), "another")
            async with RunStore.open(info) as store:
                for _ in range(600):
                    runs = await store.launched(job.id)
                    if runs and sum(runs[0].counts.values()):
                        break
                    await asyncio.sleep(0.2)
                launcher.stop(job.id)
                await asyncio.wait_for(job.task, 60)
                runs = await store.launched(job.id)
                other = await store.launched("not-this-launch")
    assert job.returncode == 130, "\n".join(job.output)
    assert "SIGINT: stopping" in "\n".join(job.output)
    assert len(runs) == 1 and runs[0].status == "interrupted" and other == []
    assert runs[0].items == 10 and 0 < sum(runs[0].counts.values()) < 10
    assert not launcher.busy
    with pytest.raises(LaunchError, match="no such run under way"):
        launcher.stop(job.id)
