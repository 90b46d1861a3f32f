"""The driver of a distributed run: it joins (or starts) a Ray cluster, starts a worker per
node, hands out shards phase by phase, and takes every finished item as it streams back. The
driver alone writes the artifact and the run store (through the same `on_done` a run in one
process uses), so a distributed run has the same plan, records and report.

Faults: a worker that cannot start is named and left out (the run fails only when none
starts); a worker that dies mid-shard has the shard's unfinished items run again by another,
and an item is counted once whatever comes back twice; a stop (Ctrl-C, SIGTERM) halts every
worker, keeps what finished and leaves the rest to `resume`; one while Ray starts ends the
run before any item is sent (the transport keeps the run's own signal handlers, never Ray's).
Nothing is left running: each worker closes its harness and is killed, and a local Ray instance
the driver started is shut down. The driver reaches Ray through a transport (transport.py)
alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import resource
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from evals.execute.cache import CacheUse
from evals.execute.cluster.plan import ClusterError, ClusterPlan
from evals.execute.cluster.shards import SHARDS_PER_WORKER, Shard, shards_of
from evals.execute.cluster.spend import Budget
from evals.execute.cluster.transport import Actor, RayStartStopped, RayTransport, Transport
from evals.execute.cluster.worker import JudgeSpec, ShardWorker, VariantSpec, WorkerSpec
from evals.execute.env import EvalEnv
from evals.execute.guard import Spend
from evals.execute.runner import OnDone, Variant
from evals.fixtures.lab_catalog import CATALOGS, Catalog
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.repetitions import RepeatRule
from evals.record.results import CaseResult, counted_status
from evals.settings import DEFAULT_CONCURRENCY

CLOSE_S = 60.0  # how long a worker may take to close its harness before it is killed anyway


@dataclass
class Figures:
    """What the driver saw of the run's workers (the benchmark prints them)."""

    startup_s: float = 0.0
    handles: list[Actor] = field(default_factory=list)  # the workers' actors, once started
    workers: list[dict[str, Any]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    driver_peak_mb: float = 0.0


def _judge_spec(judge: JudgeSetup | None, ref: str | None) -> JudgeSpec | None:
    if judge is None:
        return None
    # The driver's judge model may be guarded or cached: the worker asks for it afresh.
    return JudgeSpec.of(judge, ref)


def cluster_runner(plan: ClusterPlan, figures: Figures | None = None,
                   transport: Transport | None = None
                   ) -> Callable[..., Awaitable[dict[str, list[CaseResult]]]]:
    """A function that runs a plan's items as `run_variants` does, spread over the cluster."""
    return lambda *args, **kw: run_on_cluster(plan, *args, figures=figures,
                                              transport=transport, **kw)


async def run_on_cluster(
    plan: ClusterPlan, env: EvalEnv | None, items: Sequence[EvalItem],
    variants: list[Variant], *, concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None, judge: JudgeSetup | None = None, visitor: Any = None,
    on_done: OnDone | None = None, repeat: int = 1,
    on_phase: Callable[[Catalog], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None, max_cost_usd: float | None = None,
    skip: Mapping[tuple[str, str, int], str] | None = None, rule: RepeatRule | None = None,
    cache: CacheUse | None = None, figures: Figures | None = None,
    transport: Transport | None = None, spend: Spend | None = None,
) -> dict[str, list[CaseResult]]:
    """`run_variants` over a Ray cluster (the same arguments; `env` is the driver's, used by
    `on_phase` alone): every item, `repeat` times, for every variant, each finished item
    handed to `on_done` once, as it streams back. `transport` carries it (Ray's by default).
    With `spend` (the command's budget), the workers draw on one Budget actor that starts from
    what it holds, and what they spent is added to it at the end."""
    carrier: Transport = transport or RayTransport()
    stop = stop or asyncio.Event()
    figures = figures or Figures()
    done: dict[tuple[str, str, int], str] = dict(skip or {})
    results: dict[tuple[str, str, int], CaseResult] = {}
    t0 = time.perf_counter()
    spec = WorkerSpec(
        settings=plan.settings, local_model=plan.local_model, server=plan.server,
        variants=tuple(VariantSpec(v.label, plan.refs.get(v.label), v.frozen, v.run_id,
                                   v.max_steps)
                       for v in variants),
        judge=_judge_spec(judge, plan.judge_ref), visitor=visitor is not None,
        concurrency=concurrency, vision=vision, repeat=repeat, rule=rule,
        cache=cache.policy if cache is not None and cache.cache is not None else "off",
        max_cost_usd=max_cost_usd, embedder=plan.embedder)
    with ExitStack() as joined:
        try:
            joined.enter_context(carrier.connected(plan))
        except RayStartStopped as exc:  # stopped before a worker was asked for: nothing ran
            print(f"ray: {exc}", file=sys.stderr)
            stop.set()
            return {v.label: [] for v in variants}
        budget: Actor | None = None
        actors: list[tuple[str, Actor]] = []
        try:
            if spend is not None:
                max_cost_usd = spend.max_cost_usd
                spec = dataclasses.replace(spec, max_cost_usd=max_cost_usd)
            if max_cost_usd is not None or spend is not None:
                budget = carrier.spawn(Budget, max_cost_usd,
                                       spend.cost_usd if spend is not None else 0.0)
                spec = dataclasses.replace(spec, budget=budget)
            actors = _place(carrier, plan, spec)
            workers = await _start(actors)
            figures.startup_s = time.perf_counter() - t0
            figures.handles = [actor for _, actor in workers.values()]
            print(f"ray: {len(workers)} worker(s) ready in {figures.startup_s:.1f} s:"
                  f" {', '.join(workers)}", file=sys.stderr)
            labels = [v.label for v in variants]
            phases = shards_of(items, len(workers), done, labels, repeat)
            lost: set[str] = set()
            for catalog in CATALOGS:
                if catalog not in phases or stop.is_set():
                    continue
                if catalog != "demo" and on_phase is not None:
                    # What the driver records as told (the agent fingerprint) is composed on
                    # its own database, which must hold the catalogue the workers seed for
                    # this phase.
                    if env is not None:
                        await env.use_catalog(catalog)
                    await on_phase(catalog)
                queue = deque(phases[catalog])
                await _phase(carrier, workers, queue, lost, done, results, labels, repeat,
                             on_done, stop, budget)
                if len(lost) == len(workers):
                    print(f"error: every worker was lost ({', '.join(sorted(lost))}): the"
                          " items left are not run; resume runs them", file=sys.stderr)
                    break
            figures.lost = sorted(lost)
            for name, (_, actor) in workers.items():
                if name not in lost:
                    try:
                        figures.workers.append(await actor.call("stats"))
                    except Exception:  # a worker lost at the very end: its figures are gone
                        pass
        finally:
            if spend is not None and budget is not None:
                await _spent_on_workers(budget, spend)
            await _close(actors, budget)
            figures.driver_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {label: [results[(label, i.id, r)] for i in items for r in range(1, repeat + 1)
                    if (label, i.id, r) in results] for label in [v.label for v in variants]}


def _place(transport: Transport, plan: ClusterPlan, spec: WorkerSpec
           ) -> list[tuple[str, Actor]]:
    """The worker actors, one at each of the transport's places, each with its model server
    when the plan names one per worker; a worker's share of the budget is kept under its
    place's name."""
    actors = []
    for n, (where, place) in enumerate(transport.places(plan)):
        worker_spec = dataclasses.replace(spec, owner=where)
        if plan.model_bases:
            base = plan.model_bases[n % len(plan.model_bases)]
            worker_spec = dataclasses.replace(worker_spec, settings=spec.settings.model_copy(
                update={"model_api_base": base}))
        actors.append((where, transport.spawn(ShardWorker, worker_spec, place=place)))
    return actors


async def _start(actors: list[tuple[str, Actor]]) -> dict[str, tuple[str, Actor]]:
    """Start every worker's harness; one that cannot start is named and left out. Each worker
    that started, by its name: where it is, and its actor."""
    starting = await asyncio.gather(*(actor.call("start") for _, actor in actors),
                                    return_exceptions=True)
    workers: dict[str, tuple[str, Actor]] = {}
    failed: list[str] = []
    for (where, actor), outcome in zip(actors, starting, strict=True):
        if isinstance(outcome, BaseException):
            # Ray's error holds the worker's own as its cause.
            why = str(getattr(outcome, "cause", None) or outcome).strip().splitlines()
            failed.append(f"{where}: {why[-1] if why else type(outcome).__name__}")
            print(f"warning: the worker on {where} could not start:"
                  f" {why[-1] if why else outcome!r}; the run goes on without it",
                  file=sys.stderr)
        else:
            workers[f"{where} {outcome}"] = (where, actor)
    if not workers:
        raise ClusterError("no worker could start: " + "; ".join(failed))
    return workers


async def _phase(transport: Transport, workers: dict[str, tuple[str, Actor]],
                 queue: deque[Shard], lost: set[str],
                 done: dict[tuple[str, str, int], str],
                 results: dict[tuple[str, str, int], CaseResult], labels: list[str],
                 repeat: int, on_done: OnDone | None, stop: asyncio.Event,
                 budget: Actor | None = None) -> None:
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

    async def lose(name: str, where: str, actor: Actor, shard: Shard, why: str) -> None:
        lost.add(name)
        # Killed, so a worker that was only unreachable calls no model for items now run
        # elsewhere; what it had reserved of the run's budget is given back.
        actor.kill()
        if budget is not None:
            await budget.call("release", where)
        print(f"warning: lost the worker on {name} ({why}); {requeue(shard)} of its items go"
              " to another worker", file=sys.stderr)

    async def work(name: str, where: str, actor: Actor) -> None:
        while queue and name not in lost and not stop.is_set():
            shard = queue.popleft()
            mine = {k: s for k, s in statuses().items() if k[1] in shard.ids}
            try:
                async for label, raw in actor.stream("run_shard", shard, mine):
                    result = CaseResult.model_validate_json(raw)
                    key = (label, result.id, result.repetition)
                    if key in results or key in done:
                        continue  # never counted twice
                    results[key] = result
                    if on_done is not None:
                        await on_done(label, result)
            except transport.lost as exc:
                if name not in lost:
                    await lose(name, where, actor, shard, type(exc).__name__)
                else:  # another of its streams said so first: its items go back too
                    requeue(shard)
                return

    async def halt_on_stop() -> None:
        await stop.wait()
        if budget is not None:
            await budget.call("halt")
        await asyncio.gather(*(a.call("halt") for n, (_, a) in workers.items()
                               if n not in lost), return_exceptions=True)

    halting = asyncio.create_task(halt_on_stop())
    try:
        # Again while a lost worker's items came back after the others had run out of work.
        while queue and len(lost) < len(workers) and not stop.is_set():
            async with asyncio.TaskGroup() as group:
                for name, (where, actor) in workers.items():
                    if name not in lost:
                        for _ in range(SHARDS_PER_WORKER):
                            group.create_task(work(name, where, actor))
    finally:
        halting.cancel()
        await asyncio.gather(halting, return_exceptions=True)


async def _spent_on_workers(budget: Actor, spend: Spend) -> None:
    """Add what the workers spent, job by job, to the command's budget."""
    try:
        parts = await asyncio.wait_for(budget.call("spent"), CLOSE_S)
    except Exception as exc:  # the budget actor was lost: its figures are gone, and said so
        print(f"warning: what the workers spent is not known ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return
    for job, usd in parts.items():
        spend.add(usd, job)


async def _close(actors: list[tuple[str, Actor]], budget: Actor | None) -> None:
    """Close every worker's harness (bounded), then kill the actors: nothing left running."""
    closing = [actor.call("close") for _, actor in actors]
    if not closing and budget is None:
        return
    try:
        await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_S)
    except TimeoutError:
        print(f"warning: a worker did not close within {CLOSE_S:.0f} s; killed",
              file=sys.stderr)
    for _, actor in actors:
        actor.kill()
    if budget is not None:
        budget.kill()
