"""Control flow: execute → check → retry once → classify, under one concurrency limit.

The statuses are defined in evals/record/results.py; the executors in executors.py; the checks
in evals/checks/. Every item, case or conversation, goes the same way.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.chat.model_info import price_per_token
from app.chat.models import ChatModel
from app.chat.reply import Usage as ReplyUsage
from app.chat.retry import ModelCallError, retry_wait_s
from evals.checks import NO_ANSWER, measure_checks, run_checks
from evals.execute.cache import CacheUse, Tally, cached, sample
from evals.execute.env import EvalEnv
from evals.execute.executors import EXECUTORS, Execution, Setup
from evals.execute.guard import CallGuard, Spend
from evals.fixtures.catalog import fixtures_for
from evals.fixtures.lab_catalog import CATALOGS, Catalog
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.fingerprint import FrozenContext
from evals.record.repetitions import RepeatRule
from evals.record.results import (
    NOT_CALLED,
    Attempt,
    Calls,
    CaseResult,
    CheckResult,
    Usage,
    classify,
    counted_status,
)
from evals.record.transcript import Transcript
from evals.settings import DEFAULT_CONCURRENCY

MAX_ATTEMPTS = 2  # one retry
# Tries of one attempt lost to provider errors (after the model's own retries) before the
# attempt is given up as an ERROR. A guard's refusal (NOT_CALLED) and a request the provider
# refused are not tried again: neither would answer otherwise.
PROVIDER_REATTEMPTS = 1
NOT_RETRIED = (*NOT_CALLED, "refused")
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


def attempt_cost(model_id: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The attempt's price from litellm's price data; None when the model has no price."""
    prices = price_per_token(model_id)
    if prices is None:
        return None
    return prompt_tokens * prices[0] + completion_tokens * prices[1]


def _usage(execution: Execution) -> Usage:
    u, visitor = execution.usage, execution.visitor_usage
    return Usage(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                 cut_at_cap=u.cut, cached_tokens=u.cached_tokens, prefill_ms=u.prefill_ms,
                 generation_ms=u.generation_ms,
                 visitor_tokens=visitor.prompt_tokens + visitor.completion_tokens
                 if visitor is not None else 0)


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


async def attempt(item: EvalItem, setup: Setup, judge: JudgeSetup | None = None,
                  executor: str | None = None, *, repetition: int = 1, number: int = 1,
                  run_id: str | None = None) -> Attempt:
    """One attempt of an item by its executor (or the variant's), then its checks: one sample
    (`repetition`, attempt `number`) of every model it calls, which the call cache keys by
    and keeps under `run_id` (the variant's run)."""
    with sample(repetition, number, run_id) as tally:
        done = await _attempt(item, setup, judge, executor)
    done = _with_calls(done, tally, setup.model.model_id)
    if done.error is not None:
        return done
    # Latency and cost are known only now, with the calls counted: the measured checks last.
    return done.model_copy(update={"checks": [*done.checks,
                                              *measure_checks(item.checks, done)]})


# The jobs whose calls are inside an attempt's measured latency (a judge's come after it, in
# the checks): a replayed one adds what it took when made (evals/checks/spend.py).
TIMED_JOBS = ("chat", "visitor")


def _with_calls(done: Attempt, tally: Tally, model_id: str) -> Attempt:
    """The attempt with its model calls counted: a replayed call's tokens, cost and latency
    apart from what was spent and measured."""
    if not tally.made and not tally.replayed:
        return done
    chat = tally.replayed_by_job.get("chat", ReplyUsage())
    visitor = tally.replayed_by_job.get("visitor", ReplyUsage())
    prompt, completion = chat.prompt_tokens, chat.completion_tokens
    u = done.usage
    # What this run spent: a replayed reply's tokens and the server's timings of it are the
    # run that made it's (`cut` stays: it says what the answer is).
    usage = u.model_copy(update={
        "prompt_tokens": max(0, u.prompt_tokens - prompt),
        "completion_tokens": max(0, u.completion_tokens - completion),
        "cached_tokens": max(0, u.cached_tokens - chat.cached_tokens),
        "prefill_ms": max(0, u.prefill_ms - chat.prefill_ms),
        "generation_ms": max(0, u.generation_ms - chat.generation_ms),
        "visitor_tokens": max(0, u.visitor_tokens - visitor.prompt_tokens
                              - visitor.completion_tokens)})
    calls = Calls(made=tally.made, replayed=tally.replayed,
                  replayed_prompt_tokens=tally.replayed_prompt_tokens,
                  replayed_completion_tokens=tally.replayed_completion_tokens,
                  replayed_cost_usd=_replayed_cost(tally, model_id, prompt, completion),
                  replayed_from=sorted(tally.runs),
                  replayed_timed=sum(tally.replayed_calls_by_job.get(j, 0) for j in TIMED_JOBS),
                  replayed_latency_ms=_replayed_ms(tally))
    update: dict[str, object] = {"calls": calls, "usage": usage}
    if done.cost_usd is not None:
        update["cost_usd"] = attempt_cost(model_id, usage.prompt_tokens,
                                          usage.completion_tokens)
    return done.model_copy(update=update)


def _replayed_cost(tally: Tally, model_id: str, prompt: int, completion: int) -> float | None:
    """What the replayed chat calls cost when they were made (the price then); entries kept
    before costs were are counted at today's price; None when no price is known."""
    if not tally.replayed:
        return None
    recorded = tally.replayed_cost_by_job.get("chat")
    if tally.replayed_calls_by_job.get("chat") and recorded is not None:
        return recorded
    return attempt_cost(model_id, prompt, completion)


def _replayed_ms(tally: Tally) -> int | None:
    """What the replayed calls inside the attempt's latency took when made; None when one of
    them has no latency recorded."""
    took = [tally.replayed_ms_by_job.get(job, 0) for job in TIMED_JOBS]
    return None if None in took else sum(ms or 0 for ms in took)


async def _attempt(item: EvalItem, setup: Setup, judge: JudgeSetup | None,
                   executor: str | None) -> Attempt:
    started = time.perf_counter()
    try:
        execution = await EXECUTORS[executor or item.executor].run(item, setup)
    except ModelCallError as exc:
        lost = Attempt(error=f"model call failed: {exc}", failure=exc.kind or "unreadable",
                       latency_ms=_elapsed_ms(started))
        lost._retry_after_s = getattr(exc, "retry_after_s", None)
        return lost
    except Exception as exc:  # a harness failure is this item's ERROR, not the run's end
        return Attempt(error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}",
                       latency_ms=_elapsed_ms(started))
    transcript = execution.transcript
    if execution.broke is not None:
        return Attempt(transcript=_answer_only(transcript), error=execution.broke)
    try:
        checks = await run_checks(item.checks, transcript, fixtures_for(item.context.catalog),
                                  judge, item.context.about(item.photos))
    except Exception as exc:
        return Attempt(transcript=_answer_only(transcript),
                       error=f"checking failed: {type(exc).__name__}: {exc}")
    if item.single_turn and not transcript.answer.strip():  # saying nothing fails a case
        checks.insert(0, CheckResult(kind="answer", passed=False, reason=NO_ANSWER))
    # What the record keeps: not what the model was sent (the checks have read it), and the
    # conversation only when it was more than one exchange.
    kept: dict[str, list[object]] = {"messages": []}
    if item.single_turn and len(transcript.turns) <= 2:
        kept["turns"] = []
    transcript = transcript.model_copy(update=kept)
    usage = _usage(execution)
    return Attempt(
        transcript=transcript, checks=checks, timings=execution.timings,
        latency_ms=execution.latency_ms or _elapsed_ms(started), usage=usage,
        cost_usd=attempt_cost(setup.model.model_id, usage.prompt_tokens,
                              usage.completion_tokens))


def _answer_only(transcript: Transcript) -> Transcript:
    """What a broken attempt keeps: the answer and the tool calls that led to it."""
    return Transcript(answer=transcript.answer, tool_calls=transcript.tool_calls)


async def same_attempt(make: Callable[[], Awaitable[Attempt]]) -> Attempt:
    """One attempt; a try lost to a provider's failure is tried again as the same attempt,
    after waiting what the provider asked (Retry-After, capped) or a back-off. One still lost
    after PROVIDER_REATTEMPTS says so in its error."""
    lost: list[str] = []
    result = await make()
    for n in range(1, PROVIDER_REATTEMPTS + 1):
        if not result.lost_to_provider or result.failure in NOT_RETRIED:
            break
        lost.append(result.error or result.failure or "")
        await asyncio.sleep(retry_wait_s(result._retry_after_s, n))
        result = await make()
    if result.lost_to_provider:
        tries = len(lost) + 1
        result = result.model_copy(update={
            "error": f"lost to the provider after {tries} tr{'ies' if tries > 1 else 'y'} of"
                     f" this attempt (not a check failure): {result.error}"})
    return result.model_copy(update={"lost_to": lost}) if lost else result


async def with_one_retry(make: Callable[[int], Awaitable[Attempt]]) -> list[Attempt]:
    """One attempt, and a second only when the first failed a check or broke (up to
    MAX_ATTEMPTS); an undecided attempt is not retried, since a retry cannot make its judge
    trusted, and neither is one the guard refused or one lost to the provider (it was already
    tried again as the same attempt: a second attempt would count it as a flake). `make` is
    given the attempt's number."""
    attempts = [await same_attempt(functools.partial(make, 1))]
    while not (attempts[-1].passed or attempts[-1].undecided
               or attempts[-1].failure is not None) and len(attempts) < MAX_ATTEMPTS:
        attempts.append(await same_attempt(functools.partial(make, len(attempts) + 1)))
    return attempts


def result_of(item: EvalItem, repetition: int, **fields: object) -> CaseResult:
    return CaseResult(id=item.id, file=item.file, prompt=item.prompt, group=item.group,
                      attack=item.attack, context=item.context.key,
                      repetition=repetition, **fields)  # type: ignore[arg-type]


async def run_item(item: EvalItem, setup: Setup, judge: JudgeSetup | None = None, *,
                   repetition: int = 1, executor: str | None = None,
                   run_id: str | None = None) -> CaseResult:
    attempts = await with_one_retry(lambda n: attempt(item, setup, judge, executor,
                                                      repetition=repetition, number=n,
                                                      run_id=run_id))
    return result_of(item, repetition, status=classify(attempts), attempts=attempts)


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
    the cost cap is the run's: every one of their calls counts toward it. Once `stop` is set no
    new model call is made, items in flight get GRACE_S to finish, and the rest are left out of
    the result (the caller lists them as unfinished). `skip` names (variant, item, repetition)
    already done, with its status. With `cache`, every model call (each variant's, the
    judge's, the visitor's) is replayed from the call cache when it is there and kept there
    when it is made.

    With a `rule` (`--repeat auto`, `repeat` its MAX) an item's repetition r + 1 starts only
    once r has finished and the rule leaves its verdict open; other items run meanwhile.

    `limit` and `spend`, when given, are shared with other calls (a worker running several
    shards at once: evals/execute/cluster/); otherwise this call has its own, of `concurrency`
    items and `max_cost_usd`."""
    _freeze_what_lives()
    stop = stop or asyncio.Event()
    limit = limit or asyncio.Semaphore(concurrency)
    results: dict[tuple[str, str, int], CaseResult] = {}
    spend = spend or Spend(max_cost_usd)
    guards = {v.label: CallGuard(v.model, concurrency, spend=spend, stop=stop)
              for v in variants}
    if judge is not None and not isinstance(judge.model, CallGuard):
        # Its own stop event: a stopped run lets the items in flight be judged in their grace
        # time. It does not take the model's retry hook, which the chat model's guard holds
        # when the judge is the same model object.
        judge = replace(judge, model=CallGuard(judge.model, concurrency, spend=spend,
                                               listen_to_retries=False))
    if visitor is not None and not isinstance(visitor, CallGuard):
        # A stopped run asks the simulated visitor nothing more either.
        visitor = CallGuard(visitor, concurrency, spend=spend, stop=stop,
                            listen_to_retries=not any(visitor is v.model for v in variants))
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
