"""Runs started from the workspace: the CLI in a child process, found in the store by its
launch id, one at a time, and stopped as Ctrl-C stops it (what finished is kept); a repeated
idempotency key answered with the launch already made, here or in another process."""

import asyncio
import os

import pytest

from app.db import scratch_database
from evals.load.cases import load_cases
from evals.record.launches import LaunchConflict, claim_launch, launch_by_key, load_launch
from evals.record.store import RunStore
from evals.workspace.launch import Launcher, LaunchError, Request
from tests.evals.helpers import select
from tests.fake_openai import completion, fake_openai_server

KEY = "3f1c2a9e-7b7d-4c1e-9a53-0b2f6d1e4c88"


def slow(body):
    return 0.4, completion("We don't have that machine here.")


@pytest.mark.slow  # the launcher starts the CLI in a child process
async def test_a_launched_run_is_followed_by_its_launch_id_and_stops_gracefully(
        server_conninfo, store_template, tmp_path):
    async with scratch_database(server_conninfo, prefix="test_launch",
                                template=store_template) as info:
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
    items = len(select(load_cases(), "honest-absence,lab-identity"))
    assert runs[0].items == items and 0 < sum(runs[0].counts.values()) < items
    assert not launcher.busy
    with pytest.raises(LaunchError, match="no such run under way"):
        launcher.stop(job.id)


class Counting(Launcher):
    """A launcher that starts nothing, counting what it would start."""

    def __init__(self):
        super().__init__(env={})
        self.started = []

    def start(self, request, title, launch_id=None):
        self.started.append(launch_id)
        return None


async def test_a_launcher_answers_a_repeated_key_with_the_launch_already_made(store):
    request = Request(names=("no-glowforge",), kinds="cases")
    here = Counting()
    first = await here.launch(store, request, "run", KEY)
    assert not first.repeated and here.started == [first.id]
    # another process (the MCP server beside the workspace) asked with the same key
    elsewhere = Counting()
    again = await elsewhere.launch(store, request, "run", KEY)
    assert again.id == first.id and again.repeated and again.job is None
    assert elsewhere.started == []
    with pytest.raises(LaunchConflict, match="kinds: 'cases' then, 'both' now"):
        await elsewhere.launch(store, Request(names=("no-glowforge",)), "run", KEY)
    assert (await load_launch(store, first.id)).request == request.exact()


async def test_a_new_launch_waits_for_the_one_under_way_but_a_repeat_does_not(store):
    launcher = Launcher(env={})
    launcher.latest = type("Busy", (), {"running": True, "id": "x"})()
    with pytest.raises(LaunchError, match="a run is under way"):
        await launcher.launch(store, Request(), "run", "other-key-0001")
    assert await launch_by_key(store, "other-key-0001") is None  # a refused launch keeps none
    await claim_launch(store, "launch00009", KEY, Request())
    assert (await launcher.launch(store, Request(), "run", KEY)).id == "launch00009"


async def test_two_launches_at_once_with_different_keys_start_one_and_keep_one_key(store):
    class Busy(Counting):
        def start(self, request, title, launch_id=None):
            job = super().start(request, title, launch_id)
            self.latest = type("Running", (), {"running": True, "id": launch_id})()
            return job

    launcher = Busy()
    outcomes = await asyncio.gather(
        launcher.launch(store, Request(), "one", "first-key-0001"),
        launcher.launch(store, Request(), "two", "second-key-0002"), return_exceptions=True)
    started = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, LaunchError)]
    assert len(started) == 1 and len(refused) == 1 and launcher.started == [started[0].id]
    kept = [await launch_by_key(store, k) for k in ("first-key-0001", "second-key-0002")]
    assert sum(k is not None for k in kept) == 1  # the refused one's key is not kept
