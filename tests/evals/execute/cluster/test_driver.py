"""A run spread over two workers, against a scripted model server: the same statuses as in
one process (on a local Ray instance), and, with the workers in this process (the fake
transport: the driver's and the workers' own code, only the process boundary faked), a killed
worker's items run elsewhere and counted once, a worker that cannot start is named, a stopped
run is resumed to the end, and the agent recorded is the one a run in one process records."""

import shutil
import signal
from pathlib import Path

import pytest

from app.chat.openai_wire import OpenAICompatModel
from app.embed import HashEmbedder
from app.settings import Settings
from evals.execute.cluster import ClusterError, ClusterPlan, Figures, cluster_runner, run_on_cluster
from evals.execute.runner import Variant, run_variants
from evals.execute.session import Controls, Prepared, Version
from tests.evals.execute.cluster.fake_transport import FakeTransport
from tests.evals.execute.helpers import cases, plan
from tests.fake_openai import completion, fake_openai_server

ANSWER = "We don't have that machine. The lab's Form 4 and Trotec Speedy 400 are here."
NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers HTTP there


@pytest.fixture
async def transport():
    fake = FakeTransport()
    yield fake
    await fake.aclose()


def slow(seconds):
    def answer(body):
        return seconds, completion(ANSWER)
    return answer


def settings_for(tmp_path: Path, base: str) -> Settings:
    return Settings(data_dir=tmp_path, model_chat="openai/fake", model_api_base=base,
                    openai_api_key="x", model_retries=0)


def cluster(tmp_path, base, server_conninfo, **more) -> ClusterPlan:
    """Two workers, whose embedder is the tests' stand-in, as a run in one process here has."""
    return ClusterPlan(**{"address": "local:2", "settings": settings_for(tmp_path, base),
                          "local_model": False, "server": server_conninfo,
                          "refs": {"run": None}, "embedder": HashEmbedder(), **more})


class Watch:
    """What the test sees while Ray is up: the SIGTERMs its stand-in for the run's own handler
    took, and the processes of the instance (Ray's renamed ones too: `ray::ShardWorker`)."""

    def __init__(self, ray_dir: Path) -> None:
        self.ray_dir = str(ray_dir)
        self.signals: list[int] = []
        self.processes: dict[int, tuple[object, str]] = {}  # pid: (process, its name)

    def handler(self, signum, frame):  # the run's own, in place of Ray's: it goes on
        self.signals.append(signum)

    def look(self) -> None:
        import psutil

        for proc in psutil.Process().children(recursive=True):
            try:
                name = proc.name()
                if name.startswith(("ray::", "raylet", "gcs_server")) or \
                        self.ray_dir in " ".join(proc.cmdline()):
                    self.processes[proc.pid] = (proc, name)
            except psutil.Error:
                pass


# The one test on a real Ray instance (its workers in processes of their own), end to end: the
# run starts the instance itself, as `--ray local:2` does. Ray's start-up puts in a SIGTERM
# handler of its own that exits at once; the run's own is back before the first item is done,
# and a SIGTERM sent then reaches it, not Ray's (what Ray's handler does to a run stopped while
# Ray starts, and the run's reply, are tested with a stand-in for Ray in test_transport.py).
# A stopped instance leaves no process running.
@pytest.mark.slow
async def test_the_cluster_gives_the_statuses_one_process_gives(env, tmp_path, server_conninfo,
                                                                 monkeypatch):
    import tempfile

    import psutil

    items = cases("honest-absence,catalog-lookup")  # the demo and the large lab's phases
    # the instance keeps its files here (short: its sockets' paths are bounded)
    ray_dir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    monkeypatch.setenv("RAY_TMPDIR", str(ray_dir))
    watch = Watch(ray_dir)
    before = signal.signal(signal.SIGTERM, watch.handler)
    try:
        await _compared(env, tmp_path, server_conninfo, items, watch)
    finally:
        signal.signal(signal.SIGTERM, before)
        shutil.rmtree(ray_dir, ignore_errors=True)
    assert watch.signals == [signal.SIGTERM]  # the run's handler took it; the run went on
    names = {name for _, name in watch.processes.values()}
    assert {"raylet", "gcs_server"} <= names and any(
        n.startswith("ray::") for n in names), names  # the instance was seen while it ran
    _, alive = psutil.wait_procs([proc for proc, _ in watch.processes.values()], timeout=10)
    assert alive == []  # the instance's raylet, GCS, agents and workers


async def _compared(env, tmp_path, server_conninfo, items, watch):
    with fake_openai_server(slow(0.01)) as (base, received):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        here = await run_variants(env, items, [Variant("run", model)], concurrency=4)
        streamed = []

        async def on_done(label, result):
            streamed.append((label, result.id))
            watch.look()
            if len(streamed) == 1:  # Ray is up: a SIGTERM now goes to the run's own handler
                signal.raise_signal(signal.SIGTERM)

        figures = Figures()
        # The real embedder, loaded on each Ray worker, as a distributed run has it.
        there = await run_on_cluster(cluster(tmp_path, base, server_conninfo, embedder=None),
                                     None, items, [Variant("run", model)], concurrency=4,
                                     on_done=on_done, figures=figures)
    assert {r.id: r.status for r in there["run"]} == {r.id: r.status for r in here["run"]}
    assert [r.id for r in there["run"]] == [i.id for i in items]  # the files' order
    assert sorted(i for _, i in streamed) == sorted(i.id for i in items)  # each once
    assert len(figures.workers) == 2 and sum(w["items"] for w in figures.workers) == len(items)
    assert not figures.lost


async def test_a_killed_worker_s_items_run_on_another_and_each_is_counted_once(
        transport, tmp_path, server_conninfo, capsys):
    items = cases("honest-absence,catalog-lookup")
    figures = Figures()
    streamed: list[str] = []

    async def on_done(label, result):
        streamed.append(result.id)
        if len(streamed) == 2:  # mid-run: one worker's process is gone
            figures.handles[0].kill()

    with fake_openai_server(slow(0.3)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        there = await run_on_cluster(cluster(tmp_path, base, server_conninfo), None, items,
                                     [Variant("run", model)], concurrency=2, on_done=on_done,
                                     figures=figures, transport=transport)
    assert sorted(streamed) == sorted(i.id for i in items)  # none lost, none twice
    assert [r.id for r in there["run"]] == [i.id for i in items]
    assert len(figures.lost) == 1
    assert "lost the worker on" in capsys.readouterr().err


async def test_a_worker_that_cannot_start_is_named_and_the_run_goes_on(
        transport, tmp_path, server_conninfo, capsys):
    items = cases("no-glowforge,no-cnc-router")
    with fake_openai_server(slow(0.01)) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        plan_ = cluster(tmp_path, base, server_conninfo, model_bases=(base, NOWHERE))
        there = await run_on_cluster(plan_, None, items, [Variant("run", model)],
                                     transport=transport)
        assert sorted(r.id for r in there["run"]) == sorted(i.id for i in items)
        err = capsys.readouterr().err
        assert "could not start" in err and f"the model server {NOWHERE} does not answer" in err
        nobody = cluster(tmp_path, base, server_conninfo, model_bases=(NOWHERE,))
        with pytest.raises(ClusterError, match="no worker could start: worker 1: .*does not"
                                               " answer"):
            await run_on_cluster(nobody, None, items, [Variant("run", model)],
                                 transport=transport)


async def test_a_stopped_distributed_run_keeps_what_finished_and_resumes_to_the_end(
        transport, env, store, settings, tmp_path, server_conninfo):
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
                                        refs={"current": None}), transport=transport)
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
        transport, server_conninfo, store, settings, tmp_path):
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
                                        refs={"current": None}), transport=transport)
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


@pytest.mark.parametrize(("lasts", "status"), [(1, "PASS"), (1000, "ERROR")])
async def test_on_the_cluster_a_judge_call_lost_to_the_provider_never_flips_a_verdict(
        transport, tmp_path, server_conninfo, lasts, status):
    import textwrap

    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust
    from evals.load.cases import load_cases

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "j.yaml").write_text(textwrap.dedent("""\
        - id: judged
          prompt: "Which printer prints resin?"
          rubric: Names the Form 4.
        """))
    items = load_cases(tmp_path / "cases")
    judged, chat = [], []

    def answer(body):
        if "response_format" in body:  # the judge's call: 429 for the storm's length
            judged.append(body)
            if len(judged) <= lasts:
                return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
            return 200, completion('{"verdict": "pass", "reason": "it names the Form 4"}')
        chat.append(body)
        return 200, completion("The Form 4 prints resin.")

    with fake_openai_server(answer) as (base, _):
        model = OpenAICompatModel("openai/fake", api_base=base, api_key="x", retries=0,
                                  timeout_s=30)
        judge = JudgeSetup(model, Trust(True, "scripted"))
        there = await run_on_cluster(cluster(tmp_path, base, server_conninfo,
                                             judge_ref="openai/fake"), None, items,
                                     [Variant("run", model)], judge=judge, transport=transport)
    [result] = there["run"]
    # the judge is asked again about the same answer: the chat model answered once
    assert result.status == status and len(result.attempts) == 1 and len(chat) == 1
    if status == "ERROR":
        assert "the judge's call (openai/fake)" in result.attempts[0].error
