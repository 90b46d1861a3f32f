"""A run spread over a local Ray instance with two workers, against a scripted model server:
the same statuses as in one process, a killed worker's items run elsewhere and counted once,
a worker that cannot start is named, and a stopped run is resumed to the end."""

from pathlib import Path

import pytest
import ray

from app.chat.openai_wire import OpenAICompatModel
from app.settings import Settings
from evals.execute.cluster import ClusterError, ClusterPlan, Figures, cluster_runner, run_on_cluster
from evals.execute.runner import Variant, run_variants
from evals.execute.session import Controls, Prepared, Version
from tests.evals.execute.helpers import cases, plan
from tests.fake_openai import completion, fake_openai_server

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

ANSWER = "We don't have that machine. The lab's Form 4 and Trotec Speedy 400 are here."
NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers HTTP there


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=96 << 20,
             log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def slow(seconds):
    def answer(body):
        return seconds, completion(ANSWER)
    return answer


def settings_for(tmp_path: Path, base: str) -> Settings:
    return Settings(data_dir=tmp_path, model_chat="openai/fake", model_api_base=base,
                    openai_api_key="x", model_retries=0)


def cluster(tmp_path, base, server_conninfo, **more) -> ClusterPlan:
    return ClusterPlan(**{"address": "local:2", "settings": settings_for(tmp_path, base),
                          "local_model": False, "server": server_conninfo,
                          "refs": {"run": None}, **more})


async def test_the_cluster_gives_the_statuses_one_process_gives(local_ray, env, tmp_path,
                                                                 server_conninfo):
    items = cases("honest-absence,catalog-lookup")  # the demo and the large lab's phases
    with fake_openai_server(slow(0.01)) as (base, received):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        here = await run_variants(env, items, [Variant("run", model)], concurrency=4)
        streamed = []

        async def on_done(label, result):
            streamed.append((label, result.id))

        figures = Figures()
        there = await run_on_cluster(cluster(tmp_path, base, server_conninfo), None, items,
                                     [Variant("run", model)], concurrency=4, on_done=on_done,
                                     figures=figures)
    assert {r.id: r.status for r in there["run"]} == {r.id: r.status for r in here["run"]}
    assert [r.id for r in there["run"]] == [i.id for i in items]  # the files' order
    assert sorted(i for _, i in streamed) == sorted(i.id for i in items)  # each once
    assert len(figures.workers) == 2 and sum(w["items"] for w in figures.workers) == len(items)
    assert not figures.lost


async def test_a_killed_worker_s_items_run_on_another_and_each_is_counted_once(
        local_ray, tmp_path, server_conninfo, capsys):
    items = cases("honest-absence,catalog-lookup")
    figures = Figures()
    streamed: list[str] = []

    async def on_done(label, result):
        streamed.append(result.id)
        if len(streamed) == 2:  # mid-run: one worker's process is gone
            ray.kill(figures.handles[0], no_restart=True)

    with fake_openai_server(slow(0.3)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        there = await run_on_cluster(cluster(tmp_path, base, server_conninfo), None, items,
                                     [Variant("run", model)], concurrency=2, on_done=on_done,
                                     figures=figures)
    assert sorted(streamed) == sorted(i.id for i in items)  # none lost, none twice
    assert [r.id for r in there["run"]] == [i.id for i in items]
    assert len(figures.lost) == 1
    assert "lost the worker on" in capsys.readouterr().err


async def test_a_worker_that_cannot_start_is_named_and_the_run_goes_on(
        local_ray, tmp_path, server_conninfo, capsys):
    items = cases("no-glowforge,no-cnc-router")
    with fake_openai_server(slow(0.01)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        plan_ = cluster(tmp_path, base, server_conninfo, model_bases=(base, NOWHERE))
        there = await run_on_cluster(plan_, None, items, [Variant("run", model)])
        assert sorted(r.id for r in there["run"]) == sorted(i.id for i in items)
        err = capsys.readouterr().err
        assert "could not start" in err and f"the model server {NOWHERE} does not answer" in err
        nobody = cluster(tmp_path, base, server_conninfo, model_bases=(NOWHERE,))
        with pytest.raises(ClusterError, match="no worker could start: worker 1: .*does not"
                                               " answer"):
            await run_on_cluster(nobody, None, items, [Variant("run", model)])


async def test_a_stopped_distributed_run_keeps_what_finished_and_resumes_to_the_end(
        local_ray, env, store, settings, tmp_path, server_conninfo):
    items = cases("honest-absence,catalog-lookup")
    p = plan(items)
    with fake_openai_server(slow(0.2)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        controls = Controls()
        prep = Prepared(env, store, settings)
        seen: list[str] = []

        def progress(line):
            seen.append(line)
            if len(seen) == 3:
                controls.stop.set()  # as Ctrl-C does

        runner = cluster_runner(cluster(tmp_path, base, server_conninfo,
                                        refs={"current": None}))
        from evals.execute.session import run_versions
        from evals.record.run import Models, RunSettings

        first = (await run_versions(prep, items, [Version("current", model)], p,
                                    settings=RunSettings(concurrency=2), models=Models(),
                                    vision=None, judge=None, progress=progress,
                                    controls=controls, execute=runner))["current"]
        assert first.status == "interrupted" and first.unfinished
        kept = {r.id for r in first.cases}
        assert kept and len(kept) + len(first.unfinished) == len(items)
        resumed = (await run_versions(prep, items, [Version("current", model)], p,
                                      settings=RunSettings(concurrency=2), models=Models(),
                                      vision=None, judge=None, resume=first,
                                      execute=runner))["current"]
    assert resumed.status == "complete" and resumed.run_id == first.run_id
    assert sorted(r.id for r in resumed.cases) == sorted(i.id for i in items)
    stored = await store.load_run(first.run_id)
    assert sorted(r.id for r in stored.cases) == sorted(i.id for i in items)  # once each



async def test_a_distributed_run_records_the_agent_one_process_records(
        local_ray, server_conninfo, store, settings, tmp_path):
    from app.embed import HashEmbedder
    from evals.execute.env import eval_env
    from evals.execute.session import run_versions
    from evals.record.run import Models, RunSettings

    items = cases("honest-absence")  # the demo and the large lab: two phases
    assert {i.context.catalog for i in items} == {"demo", "large"}
    p = plan(items)
    with fake_openai_server(slow(0.01)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        runner = cluster_runner(cluster(tmp_path, base, server_conninfo,
                                        refs={"current": None}))
        agents = []
        for execute in ({}, {"execute": runner}):
            # A fresh environment each: the driver's seeds the large lab as its phase comes.
            async with eval_env(server_conninfo, settings, HashEmbedder()) as env:
                record = (await run_versions(Prepared(env, store, settings), items,
                                             [Version("current", model)], p,
                                             settings=RunSettings(concurrency=2),
                                             models=Models(), vision=None, judge=None,
                                             **execute))["current"]
            assert record.status == "complete"
            agents.append(record.agent)
    here, there = agents
    assert there.contexts.keys() == here.contexts.keys()
    assert there.fingerprint == here.fingerprint
