"""The driver of a distributed run: it joins (or starts) a Ray cluster, starts a worker per
node, hands out shards phase by phase, and takes every finished item as it streams back. The
driver alone writes the artifact and the run store (through the same `on_done` a run in one
process uses), so a distributed run has the same plan, records and report.

Faults: a worker that cannot start is named and left out (the run fails only when none
starts); a worker that dies mid-shard has the shard's unfinished items run again by another,
and an item is counted once whatever comes back twice; a stop (Ctrl-C, SIGTERM) halts every
worker, keeps what finished and leaves the rest to `resume`. Nothing is left running: each
worker closes its harness and is killed, and a local Ray instance the driver started is shut
down.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import resource
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.settings import Settings
from evals.execute.cache import CacheUse
from evals.execute.cluster.shards import SHARDS_PER_WORKER, Shard, shards_of
from evals.execute.cluster.spend import Budget
from evals.execute.cluster.worker import JudgeSpec, ShardWorker, VariantSpec, WorkerSpec
from evals.execute.env import EvalEnv
from evals.execute.runner import OnDone, Variant
from evals.fixtures.lab_catalog import CATALOGS, Catalog
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.repetitions import RepeatRule
from evals.record.results import CaseResult, counted_status
from evals.settings import DEFAULT_CONCURRENCY

_LOCAL = re.compile(r"^local:(\d+)$")
CLOSE_S = 60.0  # how long a worker may take to close its harness before it is killed anyway
LOCAL_OBJECT_STORE_MB = 128  # a local instance's object store: results are small


class ClusterError(RuntimeError):
    """The cluster cannot run the plan: no address, no Ray, or no worker that started."""


@dataclass(frozen=True)
class ClusterPlan:
    """Where a run goes and how its workers ask for their models."""

    address: str  # "auto", an address ("host:port", "ray://host:port"), or "local:N"
    settings: Settings  # the app's settings before any model server was started
    local_model: bool  # the run uses the embedded model: each worker starts its own
    server: str  # the run's PostgreSQL server
    refs: Mapping[str, str | None]  # each variant's chat model, as the run asked for it
    judge_ref: str | None = None
    # One OpenAI-compatible server per worker (MODEL_API_BASE): a local cluster standing in
    # for nodes that each serve their own model (the benchmark, the tests).
    model_bases: tuple[str, ...] = ()

    @property
    def local_workers(self) -> int | None:
        match = _LOCAL.match(self.address)
        return int(match.group(1)) if match else None


def check_address(address: str) -> str:
    """An address `--ray` accepts, or ClusterError saying what is."""
    match = _LOCAL.match(address)
    if match and int(match.group(1)) < 1:
        raise ClusterError(f"--ray {address}: a local instance needs at least one worker")
    if not (address == "auto" or match or re.match(r"^(ray://)?[\w.\-]+:\d+$", address)):
        raise ClusterError(f"--ray {address!r}: give auto, an address (host:port or"
                           " ray://host:port) or local:N")
    return address


@dataclass
class Figures:
    """What the driver saw of the run's workers (the benchmark prints them)."""

    startup_s: float = 0.0
    handles: list[Any] = field(default_factory=list)  # the workers' actors, once started
    workers: list[dict[str, Any]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    driver_peak_mb: float = 0.0


def _ray() -> Any:
    # Imported on a distributed run only: `import ray` takes about a second and most runs
    # never need it; it is an optional extra (pip install -e ".[ray]").
    try:
        import ray
    except ImportError as exc:
        raise ClusterError("Ray is not installed: make eval installs it when EVAL_RAY_ADDRESS"
                           " is set, or pip install -e \".[ray]\"") from exc
    return ray


def _judge_spec(judge: JudgeSetup | None, ref: str | None) -> JudgeSpec | None:
    if judge is None:
        return None
    # The driver's judge model may be guarded or cached: the worker asks for it afresh.
    return JudgeSpec.of(judge, ref)


def cluster_runner(plan: ClusterPlan, figures: Figures | None = None
                   ) -> Callable[..., Awaitable[dict[str, list[CaseResult]]]]:
    """A function that runs a plan's items as `run_variants` does, spread over the cluster."""
    return lambda *args, **kw: run_on_cluster(plan, *args, figures=figures, **kw)


async def run_on_cluster(
    plan: ClusterPlan, env: EvalEnv | None, items: Sequence[EvalItem],
    variants: list[Variant], *, concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None, judge: JudgeSetup | None = None, visitor: Any = None,
    on_done: OnDone | None = None, repeat: int = 1,
    on_phase: Callable[[Catalog], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None, max_cost_usd: float | None = None,
    skip: Mapping[tuple[str, str, int], str] | None = None, rule: RepeatRule | None = None,
    cache: CacheUse | None = None, figures: Figures | None = None,
) -> dict[str, list[CaseResult]]:
    """`run_variants` over a Ray cluster (the same arguments; `env` is the driver's, used by
    `on_phase` alone): every item, `repeat` times, for every variant, each finished item
    handed to `on_done` once, as it streams back."""
    ray = _ray()
    stop = stop or asyncio.Event()
    figures = figures or Figures()
    done: dict[tuple[str, str, int], str] = dict(skip or {})
    results: dict[tuple[str, str, int], CaseResult] = {}
    started_here = False
    t0 = time.perf_counter()
    if not ray.is_initialized():
        local = plan.local_workers
        if local is not None:
            ray.init(num_cpus=local, include_dashboard=False, log_to_driver=True,
                     object_store_memory=LOCAL_OBJECT_STORE_MB << 20,
                     configure_logging=False)
        else:
            try:
                ray.init(address=plan.address, log_to_driver=True, configure_logging=False)
            except (ConnectionError, RuntimeError) as exc:
                raise ClusterError(f"--ray {plan.address}: no Ray cluster there ({exc})"
                                   ) from exc
        started_here = True
    spec = WorkerSpec(
        settings=plan.settings, local_model=plan.local_model, server=plan.server,
        variants=tuple(VariantSpec(v.label, plan.refs.get(v.label), v.frozen, v.run_id,
                                   v.max_steps)
                       for v in variants),
        judge=_judge_spec(judge, plan.judge_ref), visitor=visitor is not None,
        concurrency=concurrency, vision=vision, repeat=repeat, rule=rule,
        cache=cache.policy if cache is not None and cache.cache is not None else "off",
        max_cost_usd=max_cost_usd)
    budget: Any = None
    actors: list[tuple[str, Any]] = []
    try:
        if max_cost_usd is not None:
            budget = ray.remote(Budget).remote(max_cost_usd)
            spec = dataclasses.replace(spec, budget=budget)
        actors = _place(ray, plan, spec)
        workers = await _start(ray, actors)
        figures.startup_s = time.perf_counter() - t0
        figures.handles = list(workers.values())
        print(f"ray: {len(workers)} worker(s) ready in {figures.startup_s:.1f} s:"
              f" {', '.join(workers)}", file=sys.stderr)
        labels = [v.label for v in variants]
        phases = shards_of(items, len(workers), done, labels, repeat)
        lost: set[str] = set()
        for catalog in CATALOGS:
            if catalog not in phases or stop.is_set():
                continue
            if catalog != "demo" and on_phase is not None:
                # What the driver records as told (the agent fingerprint) is composed on its
                # own database, which must hold the catalogue the workers seed for this phase.
                if env is not None:
                    await env.use_catalog(catalog)
                await on_phase(catalog)
            queue = deque(phases[catalog])
            await _phase(ray, workers, queue, lost, done, results, labels, repeat, on_done,
                         stop, budget)
            if len(lost) == len(workers):
                print(f"error: every worker was lost ({', '.join(sorted(lost))}): the items"
                      " left are not run; resume runs them", file=sys.stderr)
                break
        figures.lost = sorted(lost)
        for name, actor in workers.items():
            if name not in lost:
                try:
                    figures.workers.append(await actor.stats.remote())
                except Exception:  # a worker lost at the very end: its figures are gone
                    pass
    finally:
        await _close(ray, actors, budget)
        figures.driver_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if started_here:
            ray.shutdown()
    return {label: [results[(label, i.id, r)] for i in items for r in range(1, repeat + 1)
                    if (label, i.id, r) in results] for label in [v.label for v in variants]}


def _place(ray: Any, plan: ClusterPlan, spec: WorkerSpec) -> list[tuple[str, Any]]:
    """The worker actors: N on a local instance, else one on every live node."""
    remote = ray.remote(ShardWorker)
    local = plan.local_workers
    if local is not None:
        # No CPU reserved: a worker mostly waits on its model server and its database, and an
        # instance already running (the tests') may have fewer CPUs than workers.
        targets: list[tuple[str, dict[str, Any]]] = [
            (f"worker {n + 1}", {"num_cpus": 0}) for n in range(local)]
    else:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive")]
        if not nodes:
            raise ClusterError(f"--ray {plan.address}: the cluster has no live node")
        targets = [(f"node {n.get('NodeManagerAddress', '?')} ({n['NodeID'][:8]})",
                    {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(
                        n["NodeID"], soft=False)}) for n in nodes]
    actors = []
    for n, (where, options) in enumerate(targets):
        worker_spec = spec
        if plan.model_bases:
            base = plan.model_bases[n % len(plan.model_bases)]
            worker_spec = dataclasses.replace(spec, settings=spec.settings.model_copy(
                update={"model_api_base": base}))
        actors.append((where, remote.options(max_concurrency=1000, **options)
                       .remote(worker_spec)))
    return actors


async def _start(ray: Any, actors: list[tuple[str, Any]]) -> dict[str, Any]:
    """Start every worker's harness; one that cannot start is named and left out."""
    starting = await asyncio.gather(*(actor.start.remote() for _, actor in actors),
                                    return_exceptions=True)
    workers: dict[str, Any] = {}
    failed: list[str] = []
    for (where, actor), outcome in zip(actors, starting, strict=True):
        if isinstance(outcome, BaseException):
            why = str(getattr(outcome, "cause", None) or outcome).strip().splitlines()
            failed.append(f"{where}: {why[-1] if why else type(outcome).__name__}")
            print(f"warning: the worker on {where} could not start:"
                  f" {why[-1] if why else outcome!r}; the run goes on without it",
                  file=sys.stderr)
        else:
            workers[f"{where} {outcome}"] = actor
    if not workers:
        raise ClusterError("no worker could start: " + "; ".join(failed))
    return workers


async def _phase(ray: Any, workers: dict[str, Any], queue: deque[Shard], lost: set[str],
                 done: dict[tuple[str, str, int], str],
                 results: dict[tuple[str, str, int], CaseResult], labels: list[str],
                 repeat: int, on_done: OnDone | None, stop: asyncio.Event,
                 budget: Any = None) -> None:
    """Every shard of one phase, pulled by the workers as they have room; a lost worker's
    unfinished items go back in the queue for another. Any other failure ends the phase:
    every worker's stream is cancelled before it is raised."""

    def statuses() -> dict[tuple[str, str, int], str]:
        """Every sample's status as the repetition rule counts it: before this run, and now."""
        return {**done, **{k: counted_status(r) for k, r in results.items()}}

    def requeue(shard: Shard) -> int:
        """Put back what is still owed of a shard; how many items that is."""
        left = shards_of(shard.items, 1, statuses(), labels, repeat)
        for shards in left.values():
            queue.extend(shards)
        return sum(len(s.items) for shards in left.values() for s in shards)

    async def lose(name: str, actor: Any, shard: Shard, why: str) -> None:
        lost.add(name)
        # Killed, so a worker that was only unreachable calls no model for items now run
        # elsewhere; what it had reserved of the run's budget is given back.
        ray.kill(actor, no_restart=True)
        if budget is not None:
            await budget.release.remote(actor._actor_id.hex())
        print(f"warning: lost the worker on {name} ({why}); {requeue(shard)} of its items go"
              " to another worker", file=sys.stderr)

    async def work(name: str, actor: Any) -> None:
        while queue and name not in lost and not stop.is_set():
            shard = queue.popleft()
            mine = {k: s for k, s in statuses().items() if k[1] in shard.ids}
            try:
                stream = actor.run_shard.options(num_returns="streaming").remote(shard, mine)
                async for ref in stream:
                    label, raw = await ref
                    result = CaseResult.model_validate_json(raw)
                    key = (label, result.id, result.repetition)
                    if key in results or key in done:
                        continue  # never counted twice
                    results[key] = result
                    if on_done is not None:
                        await on_done(label, result)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorDiedError,
                    ray.exceptions.ActorUnavailableError) as exc:
                if name not in lost:
                    await lose(name, actor, shard, type(exc).__name__)
                else:  # another of its streams said so first: its items go back too
                    requeue(shard)
                return

    async def halt_on_stop() -> None:
        await stop.wait()
        if budget is not None:
            await budget.halt.remote()
        await asyncio.gather(*(a.halt.remote() for n, a in workers.items() if n not in lost),
                             return_exceptions=True)

    halting = asyncio.create_task(halt_on_stop())
    try:
        # Again while a lost worker's items came back after the others had run out of work.
        while queue and len(lost) < len(workers) and not stop.is_set():
            async with asyncio.TaskGroup() as group:
                for name, actor in workers.items():
                    if name not in lost:
                        for _ in range(SHARDS_PER_WORKER):
                            group.create_task(work(name, actor))
    finally:
        halting.cancel()
        await asyncio.gather(halting, return_exceptions=True)


async def _close(ray: Any, actors: list[tuple[str, Any]], budget: Any) -> None:
    """Close every worker's harness (bounded), then kill the actors: nothing left running."""
    closing = [actor.close.remote() for _, actor in actors]
    if not closing and budget is None:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_S)
    except TimeoutError:
        print(f"warning: a worker did not close within {CLOSE_S:.0f} s; killed",
              file=sys.stderr)
    for _, actor in actors:
        ray.kill(actor)
    if budget is not None:
        ray.kill(budget)
