"""Scheduling a run: every item, `repeat` times, for every variant (an agent version), under
one concurrency limit, catalogue by catalogue, until a stop or the cost cap; each item's
attempts, retries and status come from retries.py.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.chat.models import ChatModel
from evals.execute.cache import CacheUse, cached
from evals.execute.env import EvalEnv
from evals.execute.executors import Setup
from evals.execute.guard import CallGuard, Spend
from evals.execute.lost import AskedAgain
from evals.execute.retries import result_of, run_item
from evals.fixtures.lab_catalog import CATALOGS, Catalog
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.fingerprint import FrozenContext
from evals.record.repetitions import RepeatRule
from evals.record.results import Attempt, CaseResult, counted_status
from evals.settings import DEFAULT_CONCURRENCY

GRACE_S = 5.0  # how long in-flight items may finish once a run is told to stop

OnDone = Callable[[str, CaseResult], Awaitable[None]]


@dataclass(frozen=True)
class Variant:
    """One agent version in a run: a chat model, and optionally a frozen agent (the system
    prompt and tool schemas a comparison point recorded per context) instead of today's."""

    label: str
    model: ChatModel
    frozen: dict[str, FrozenContext] | None = None
    max_steps: int | None = None  # the frozen agent's recorded tool-step limit
    # Another executor than the items' own (endpoint mode), and what that path cannot run.
    executor: str | None = None
    skip: Callable[[EvalItem], str | None] | None = None
    run_id: str | None = None  # the run its calls are kept under in the call cache


@functools.cache
def _freeze_what_lives() -> None:
    """Once a process, before its first run: what lives by then (modules, the app, the
    catalogue, litellm's model data) leaves the collector's view. A full collection then
    scans only the runs' own objects; of everything, it took 0.15 s of CPU, which fell in
    whichever run grew the heap last (bench-compare: one of them made a comparison +90% CPU
    over two plain runs). At exit they are handed back, to be finalised as before."""
    gc.freeze()
    atexit.register(gc.unfreeze)


def prefix_key(item: EvalItem) -> tuple[str, str, bool]:
    ctx = item.context
    return (ctx.as_ or "", ctx.page_path.split("/")[1], ctx.curate)


def skip_reason(item: EvalItem, model: ChatModel, vision: bool | None) -> str | None:
    if item.photos:
        can_see = vision if vision is not None else model.accepts_images
        if not can_see:
            return (f"{model.model_id} takes no image input, by litellm's model info (set"
                    " EVAL_VISION=1 to send photos anyway)")
    return None


async def run_suite(env: EvalEnv, items: Sequence[EvalItem], model: ChatModel, *,
                    concurrency: int = DEFAULT_CONCURRENCY, vision: bool | None = None,
                    judge: JudgeSetup | None = None, visitor: ChatModel | None = None,
                    on_done: Callable[[CaseResult], Awaitable[None] | None] | None = None,
                    repeat: int = 1, cache: CacheUse | None = None) -> list[CaseResult]:
    """Run every item (`repeat` times): the demo-catalogue items first, then the lab's."""
    async def done(label: str, result: CaseResult) -> None:
        if on_done is not None:
            maybe = on_done(result)
            if maybe is not None:
                await maybe

    out = await run_variants(env, items, [Variant("run", model)], concurrency=concurrency,
                             vision=vision, judge=judge, visitor=visitor, on_done=done,
                             repeat=repeat, cache=cache)
    return out["run"]


async def run_variants(
    env: EvalEnv | None,
    items: Sequence[EvalItem],
    variants: list[Variant],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    vision: bool | None = None,
    judge: JudgeSetup | None = None,
    visitor: ChatModel | None = None,
    on_done: OnDone | None = None,
    repeat: int = 1,
    on_phase: Callable[[Catalog], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None,
    max_cost_usd: float | None = None,
    skip: Mapping[tuple[str, str, int], str] | None = None,
    rule: RepeatRule | None = None,
    cache: CacheUse | None = None,
    limit: asyncio.Semaphore | None = None,
    spend: Spend | None = None,
) -> dict[str, list[CaseResult]]:
    """Every item, `repeat` independent times, for every variant, interleaved (item by item,
    the variants side by side) under one concurrency limit, catalogue by catalogue: the demo
    catalogue's items of every variant first, then each larger catalogue's once it is seeded
    (`on_phase` is told of each).

    Each variant's model, the judge and the visitor are guarded (evals/execute/guard.py), and
    the cost cap is the run's: every one of their calls counts toward it. A judge's or
    visitor's call lost to the provider is asked again in place (evals/execute/lost.py). Once
    `stop` is set no new model call is made, items in flight get GRACE_S to finish, and the
    rest are left out of the result (the caller lists them as unfinished). `skip` names
    (variant, item, repetition) already done, with its status. With `cache`, every model call
    (each variant's, the judge's, the visitor's) is replayed from the call cache when it is
    there and kept there when it is made.

    With a `rule` (`--repeat auto`, `repeat` its MAX) an item's repetition r + 1 starts only
    once r has finished and the rule leaves its verdict open; other items run meanwhile.

    `limit` and `spend`, when given, are shared with other calls (a worker running several
    shards at once: evals/execute/cluster/; a command's budget, which a calibration before the
    run drew on too); otherwise this call has its own, of `concurrency` items and
    `max_cost_usd`."""
    _freeze_what_lives()
    stop = stop or asyncio.Event()
    limit = limit or asyncio.Semaphore(concurrency)
    results: dict[tuple[str, str, int], CaseResult] = {}
    spend = spend or Spend(max_cost_usd)
    guards = {v.label: CallGuard(v.model, concurrency, spend=spend, stop=stop)
              for v in variants}
    if judge is not None and not isinstance(judge.model, AskedAgain):
        # Its own stop event: a stopped run lets the items in flight be judged in their grace
        # time. It does not take the model's retry hook, which the chat model's guard holds
        # when the judge is the same model object. A call lost to the provider is asked again
        # in place (lost.py): the chat model is not asked again for it.
        judge = replace(judge, model=AskedAgain(
            CallGuard(judge.model, concurrency, spend=spend, listen_to_retries=False,
                      job="judge"), "judge"))
    if visitor is not None and not isinstance(visitor, AskedAgain):
        # A stopped run asks the simulated visitor nothing more either.
        visitor = AskedAgain(
            CallGuard(visitor, concurrency, spend=spend, stop=stop,
                      listen_to_retries=not any(visitor is v.model for v in variants),
                      job="visitor"), "visitor")
    # The cache stands before each guard: a replay takes no slot and costs nothing.
    use = cache or CacheUse(None, "off")
    # A manual's address names the port this run's blob server has: the keys read it as one.
    blobs = env.library.store.base_url if env is not None else None
    models = {v.label: cached(guards[v.label], use.cache, job="chat", run_id=v.run_id,
                              policy=use.policy, blob_base=blobs) for v in variants}
    # The judge and the visitor serve every variant: their calls are kept under the run of
    # the sample that made them.
    if judge is not None:
        judge = replace(judge, model=cached(judge.model, use.cache, job="judge",
                                            policy=use.policy, blob_base=blobs))
    visitor = cached(visitor, use.cache, job="visitor", policy=use.policy, blob_base=blobs)

    async def one(item: EvalItem, variant: Variant, repetition: int) -> None:
        guard = guards[variant.label]
        reason = (variant.skip(item) if variant.skip else None) or \
            skip_reason(item, variant.model, vision)
        if reason is None and guard.cost_cap_reached:
            reason = "cost cap reached: no new model call was made"
        if reason:
            result = result_of(item, repetition, status="SKIPPED", skipped_reason=reason)
        else:
            async with limit:
                if stop.is_set():
                    return
                setup = Setup(env, models[variant.label], visitor, variant.frozen,
                              variant.max_steps)
                try:
                    result = await run_item(item, setup, judge, repetition=repetition,
                                            executor=variant.executor, run_id=variant.run_id)
                except Exception as exc:  # whatever breaks, the other items go on
                    result = result_of(item, repetition, status="ERROR", attempts=[
                        Attempt(error=f"{type(exc).__name__}: {exc}")])
            last = result.attempts[-1] if result.attempts else None
            if last is not None and last.failure == "stopped":
                return  # unfinished: the run stopped before this item could be decided
            if last is not None and last.failure == "cost_cap" and len(result.attempts) == 1 \
                    and not last.lost_to:
                result = result.model_copy(update={
                    "status": "SKIPPED", "attempts": [],
                    "skipped_reason": "cost cap reached: no new model call was made"})
        results[(variant.label, item.id, repetition)] = result
        if on_done is not None:
            try:
                await on_done(variant.label, result)
            except Exception as exc:  # reporting a result must never lose the run
                print(f"warning: {item.id}: {type(exc).__name__}: {exc}", file=sys.stderr)

    done = skip or {}

    async def until_decided(item: EvalItem, variant: Variant, rule: RepeatRule) -> None:
        statuses: list[str] = []
        for r in range(1, rule.max + 1):
            key = (variant.label, item.id, r)
            if key not in done:
                await one(item, variant, r)
                if key not in results:
                    return  # the run stopped first: the item is unfinished
            statuses.append(done[key] if key in done else counted_status(results[key]))
            if rule.stop_after(statuses) is not None:
                return

    # Items with the same audience and page share the longest prompt prefix: running them
    # together lets a server-side prompt cache reuse it. The report keeps the files' order.
    ordered = sorted(items, key=prefix_key)
    for phase in CATALOGS:
        jobs = [(i, v, r) for i in ordered if i.context.catalog == phase
                for r in range(1, repeat + 1) for v in variants
                if (v.label, i.id, r) not in done]
        if not jobs or stop.is_set():
            continue
        if phase != "demo" and env is not None:
            await env.use_catalog(phase)
            if on_phase is not None:
                await on_phase(phase)
        if rule is None:
            tasks = [asyncio.create_task(one(i, v, r)) for i, v, r in jobs]
        else:
            chains = {(i.id, v.label): (i, v) for i, v, _ in jobs}
            tasks = [asyncio.create_task(until_decided(i, v, rule)) for i, v in chains.values()]
        await _until_stopped(tasks, stop)
    return {v.label: [results[(v.label, i.id, r)] for i in items
                      for r in range(1, repeat + 1) if (v.label, i.id, r) in results]
            for v in variants}


async def _until_stopped(tasks: list[asyncio.Task[None]], stop: asyncio.Event) -> None:
    """Wait for the tasks; once stop is set, give those in flight GRACE_S, then cancel. If one
    raises, the others are cancelled and its exception raised. (One gather, not a wait on the
    whole pending set after every task: that would cost N² for N items.)"""
    waiter: asyncio.Future[Any] = asyncio.create_task(stop.wait())
    everything: asyncio.Future[Any] = asyncio.gather(*tasks)
    try:
        await asyncio.wait({everything, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if everything.done():
            everything.result()  # raises the first task's exception, if any
            return
        pending = [t for t in tasks if not t.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=GRACE_S)
            for task in late:
                task.cancel()
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, Exception):  # broke while the run was stopping: say so
                print(f"warning: an item broke while the run stopped: {outcome!r}",
                      file=sys.stderr)
    finally:
        waiter.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(waiter, *tasks, return_exceptions=True)
        if everything.done() and not everything.cancelled():
            everything.exception()  # retrieved, so asyncio does not warn about it
