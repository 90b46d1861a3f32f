"""One or more agent versions run over one plan, stored as they go: what `run`, `compare` and
`gate` share. Each version's run is a RunRecord in the run store; each finished item is written
as soon as it finishes."""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from app import embed
from app.chat.models import ChatModel
from app.chat.openai_wire import warm_import
from app.db import connect, failure
from app.settings import Settings
from evals.execute.agent import (
    PlanMismatch,
    agent_info,
    agent_settings,
    check_frozen,
    compose_contexts,
    git_state,
)
from evals.execute.cache import CacheUse, call_cache
from evals.execute.env import ENV_TIMEOUT_S, EvalEnv, clean_stale, eval_env
from evals.execute.guard import Spend
from evals.execute.runner import Variant, run_variants
from evals.fixtures.lab_catalog import Catalog
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.artifact import RunArtifact
from evals.record.fingerprint import AgentInfo, FrozenContext, PlanInfo
from evals.record.results import CaseResult, Totals, counted_status
from evals.record.run import Models, RunRecord, RunSettings, Spent
from evals.record.store import RunStore, StoreUnavailable, new_run_id, store_name
from evals.settings import DEFAULT_CONCURRENCY, Policy, conninfo

# The run's own database is asked "SELECT 1" every WATCH_EVERY_S on a connection of its own;
# WATCH_MISSES answers missed in a row (the server stopped, or frozen) stop the run: the cases
# left need that database, and running them would only make errors.
WATCH_EVERY_S = 2.0
WATCH_TIMEOUT_S = 3.0
WATCH_MISSES = 2


@dataclass
class Prepared:
    env: EvalEnv | None  # None: nothing of the app runs (an endpoint's run)
    store: RunStore
    settings: Settings
    # Why the run's end is not in the store (it was down), when it is not.
    store_failed: str | None = None


@asynccontextmanager
async def prepared(settings: Settings, *, app: bool = True) -> AsyncIterator[Prepared]:
    """The run store and a fresh eval environment on the same PostgreSQL server, made side by
    side; the embedder loads in the background (the first item rarely needs it at once).
    Without `app` (an endpoint's run: nothing composed, no tool of the app called) the store
    alone: no copy of the app's database, no manual server, no embedder."""
    server = conninfo(settings)
    embedder = embed.default_embedder() if app else None

    # Work that can go on while PostgreSQL makes the run's database: the HTTP client's import,
    # then the embedder's model.
    def warm() -> None:
        warm_import()
        getattr(embedder, "load", lambda: None)()

    warming = asyncio.create_task(asyncio.to_thread(warm))
    for name in await clean_stale(server):
        print(f"removed {name}, left by an eval run whose process is gone")
    async with AsyncExitStack() as stack:
        if embedder is None:
            store, env = await stack.enter_async_context(RunStore.open(server)), None
        else:
            store, env = await asyncio.gather(
                stack.enter_async_context(RunStore.open(server)),
                stack.enter_async_context(eval_env(server, settings, embedder)))
        try:
            yield Prepared(env, store, settings)
        finally:
            await asyncio.gather(warming, return_exceptions=True)


async def watch_database(conninfo: str, stop: asyncio.Event) -> None:
    """Stop the run, saying why in one line, once its database misses WATCH_MISSES answers in
    a row (each bounded by WATCH_TIMEOUT_S); a stopped run is resumable."""
    misses = 0
    while not stop.is_set():
        await asyncio.sleep(WATCH_EVERY_S)
        try:
            async with asyncio.timeout(WATCH_TIMEOUT_S):
                async with await connect(conninfo, WATCH_TIMEOUT_S, autocommit=True) as conn:
                    await conn.execute("SELECT 1")
            misses = 0
        except (psycopg.Error, TimeoutError, OSError) as exc:
            misses += 1
            if misses >= WATCH_MISSES:
                why = failure(exc, WATCH_TIMEOUT_S)
                where = store_name(conninfo).replace("the run store", "the run's database")
                print(f"error: {where} does not answer ({why}, {misses} times in a row):"
                      " stopping the run", file=sys.stderr)
                stop.set()


def spent(spend: Spend) -> Spent:
    """A command's budget as its runs record it: each job's part, its cap, the models it
    called at no known price."""
    parts = spend.parts
    return Spent(chat=parts.get("chat", 0.0), judge=parts.get("judge", 0.0),
                 visitor=parts.get("visitor", 0.0),
                 calibration=parts.get("calibration", 0.0), max_cost_usd=spend.max_cost_usd,
                 unpriced=sorted(spend.unpriced), refused=spend.calls_refused)


def owed(plan: PlanInfo, done: dict[int, str]) -> list[int]:
    """The repetitions of an item still to run, given the statuses of those done: every
    missing one, or under an auto rule the next one while the rule leaves the verdict open."""
    if plan.repeat_rule is None:
        return [rep for rep in range(1, plan.repeat + 1) if rep not in done]
    statuses: list[str] = []
    for rep in range(1, plan.repeat + 1):
        if rep not in done:
            return [rep]
        statuses.append(done[rep])
        if plan.repeat_rule.stop_after(statuses) is not None:
            return []
    return []


@dataclass
class Version:
    """An agent version to run: a label, a model, and a frozen agent (a point's) or None for
    today's code."""

    label: str
    model: ChatModel
    frozen: AgentInfo | None = None
    ref: str | None = None  # how the model was asked for ("local", or an id)
    # Another executor than the items' own (endpoint mode: nothing composed, so the agent
    # recorded is the model alone), and the items that path cannot run, with why.
    executor: str | None = None
    skip: Callable[[EvalItem], str | None] | None = None

    @property
    def max_steps(self) -> int | None:
        """A frozen agent's recorded tool rounds per turn (None: today's setting)."""
        return self.frozen.settings.max_tool_steps if self.frozen is not None else None


@dataclass
class Controls:
    """How a run may be cut short: a stop (Ctrl-C, SIGTERM) and the command's budget (its
    cost cap, and what the command spent before the run, a calibration's)."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    spend: Spend = field(default_factory=Spend)

    @property
    def max_cost_usd(self) -> float | None:
        return self.spend.max_cost_usd


class AgentChanged(ValueError):
    """Today's agent is told, in a context, otherwise than the agent a resumed run began with
    was: finishing the run with it would mix two versions in one run."""


def told_otherwise(run: RunRecord, today: dict[str, FrozenContext]) -> None:
    """Refuse to resume `run` with today's agent where it is told otherwise (system prompt or
    tool schemas) than the agent the run began with, in a context both have."""
    assert run.agent is not None
    began = run.agent.contexts
    changed = sorted(key for key, told in today.items() if key in began and began[key] != told)
    if changed:
        commit = f" (commit {run.agent.git_commit[:12]})" if run.agent.git_commit else ""
        raise AgentChanged(
            f"run {run.run_id} began with another agent: what the assistant is told in"
            f" {', '.join(changed)} has changed since; a resumed run finishes with the agent it"
            f" began with{commit}: check that version out to finish it, or start a new run")


def validate_versions(items: Sequence[EvalItem], versions: list[Version]) -> None:
    """Refuse, before anything runs or is written, a frozen agent that lacks a context the
    plan uses or was given a tool that no longer exists."""
    for v in versions:
        if v.frozen is not None:
            missing: dict[str, list[str]] = {}
            for item in items:
                if item.context.key not in v.frozen.contexts:
                    missing.setdefault(item.context.key, []).append(item.id)
            if missing:
                raise PlanMismatch(v.label, dict(sorted(missing.items())))
            check_frozen(v.frozen.contexts)


async def run_versions(
    prep: Prepared, items: Sequence[EvalItem], versions: list[Version], plan: PlanInfo, *,
    settings: RunSettings, models: Models, vision: bool | None, judge: JudgeSetup | None,
    visitor: ChatModel | None = None, point: str | None = None,
    progress: Callable[[str], None] | None = None, controls: Controls | None = None,
    resume: RunRecord | None = None, artifact: Path | None = None,
    cache: Policy = "off",
    on_composed: Callable[[dict[str, FrozenContext]], Awaitable[None]] | None = None,
    execute: Callable[..., Awaitable[dict[str, list[CaseResult]]]] = run_variants,
) -> dict[str, RunRecord]:
    """Run every version over the plan, interleaved; store each run as it goes. A stopped run
    is stored as interrupted, its unfinished items listed; `resume` finishes such a run (one
    version) under the same id. `settings` and `models` are the run's (each version's label,
    order and chat model are filled in here). With one version, `artifact` is written as each
    item finishes. A store that fails on the way is said at once and caught up when it
    returns; if it is still down at the end, `prep.store_failed` says why. `cache` is the
    model-call cache's policy (evals/execute/cache.py): the cache is in the run store.
    `on_composed` is given today's demo contexts once composed, before anything runs (the
    run's impact line). `execute` runs the items (`run_variants` here, in this process; a
    cluster's runner spreads them over machines: evals/execute/cluster/)."""
    controls = controls or Controls()
    validate_versions(items, versions)
    demo = [i for i in items if i.context.catalog == "demo"]
    fragments: dict[str, dict[str, str]] = {}
    current = await compose_contexts(prep.env, demo, fragments) if prep.env is not None else {}
    if resume is not None and resume.agent is not None:
        told_otherwise(resume, current)
    if on_composed is not None:
        await on_composed(current)
    started = dt.datetime.now(dt.UTC).isoformat()
    git = await asyncio.to_thread(git_state)  # once a run, off the loop (two git processes)
    records: dict[str, RunRecord] = {}
    done_before: dict[tuple[str, str, int], str] = {}

    def agent_of(v: Version) -> AgentInfo:
        if v.executor is not None:  # the app composes nothing for it: no context is told
            return agent_info(v.model.model_id, agent_settings(prep.settings), {}, git,
                              model_ref=v.ref)
        return v.frozen or agent_info(v.model.model_id, agent_settings(prep.settings), current,
                                      git, model_ref=v.ref, fragments=fragments)

    for v in versions:
        if resume is not None:
            records[v.label] = resume.model_copy(update={"status": "running"})
            done_before |= {(v.label, r.id, r.repetition): counted_status(r)
                            for r in resume.cases}
            await prep.store.finish_run(records[v.label])
            continue
        records[v.label] = RunRecord(
            run_id=new_run_id(), status="running", started=started,
            settings=settings.model_copy(update={"order": [i.id for i in items],
                                                 "version": v.label, "cache": cache}),
            models=models.model_copy(update={"chat": v.model.model_id}),
            judge_trusted_by_flag=bool(judge and judge.forced and not judge.trust.trusted),
            plan=plan, agent=agent_of(v), point=point if v.frozen is not None else None)
        await prep.store.start_run(records[v.label])

    # One version's run is written to the artifact as it goes: first what it holds (a resumed
    # run's cases, from the store), then the items finished so far before each batch of them
    # goes to the store, and each item as it finishes while the store is down.
    writer = RunArtifact(records[versions[0].label], artifact) \
        if artifact is not None and len(versions) == 1 else None

    def write() -> None:
        if writer is None:
            return
        try:
            writer.write()
        except OSError as exc:  # the store still gets it; the run's end writes it again
            print(f"warning: the artifact {writer.path} was not written: {exc}",
                  file=sys.stderr)

    def keep(result: CaseResult) -> None:
        if writer is None:
            return
        writer.add(result)
        if prep.store.down is not None:
            write()

    def catch_up() -> None:
        if writer is not None and writer.behind:
            write()

    write()
    prep.store.before_write = catch_up

    finished: dict[str, list[CaseResult]] = {v.label: [] for v in versions}

    async def done(label: str, result: CaseResult) -> None:
        finished[label].append(result)
        keep(result)
        await prep.store.save_case(records[label].run_id or "", result)
        if progress is not None:
            name = f"{label}: {result.id}" if len(versions) > 1 else result.id
            progress(f"{result.status:<9} {name}")

    async def on_phase(catalog: Catalog) -> None:
        if prep.env is None:
            return
        composed = await compose_contexts(
            prep.env, [i for i in items if i.context.catalog == catalog], fragments)
        if resume is not None and resume.agent is not None:
            try:  # before the phase's first item: the run stops there, resumable
                told_otherwise(resume, composed)
            except AgentChanged as exc:
                print(f"error: {exc}", file=sys.stderr)
                controls.stop.set()
        current.update(composed)

    variants = [Variant(v.label, v.model, v.frozen.contexts if v.frozen else None,
                        v.max_steps, executor=v.executor, skip=v.skip,
                        run_id=records[v.label].run_id) for v in versions]
    calls = call_cache(prep.store.db, cache)
    # The run's own database; an endpoint's run, which has none, watches the run store's.
    watching = asyncio.create_task(watch_database(
        prep.env.db.conninfo if prep.env is not None else prep.store.db.conninfo,
        controls.stop))
    try:
        results = await execute(prep.env, items, variants,
                                     concurrency=settings.concurrency or DEFAULT_CONCURRENCY,
                                     vision=vision, judge=judge, visitor=visitor, on_done=done,
                                     repeat=plan.repeat, on_phase=on_phase, stop=controls.stop,
                                     max_cost_usd=controls.max_cost_usd, skip=done_before,
                                     spend=controls.spend,
                                     cache=CacheUse(calls, cache),
                                     rule=plan.repeat_rule)
    except (psycopg.Error, TimeoutError) as exc:
        # The run's own database failed between items (seeding the look-alike lab, say): the
        # run stops there, as interrupted, with every item that finished.
        print(f"error: the run's database failed ({failure(exc, ENV_TIMEOUT_S)}): the run"
              " stops here",
              file=sys.stderr)
        controls.stop.set()
        results = finished
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        if calls is not None:
            await calls.close()
    ended = dt.datetime.now(dt.UTC).isoformat()
    for v in versions:
        record = records[v.label]
        earlier = {(r.id, r.repetition): r for r in record.cases}
        now = {(r.id, r.repetition): r for r in results[v.label]}
        merged = [r for i in items for rep in range(1, plan.repeat + 1)
                  if (r := now.get((i.id, rep)) or earlier.get((i.id, rep))) is not None]
        by_item: dict[str, dict[int, str]] = {}
        for (cid, rep), r in (earlier | now).items():
            by_item.setdefault(cid, {})[rep] = counted_status(r)
        unfinished = [f"{i.id}#{rep}" for i in items for rep in owed(plan, by_item.get(i.id, {}))]
        # A resumed run keeps the version it began with.
        agent = record.agent if resume is not None and record.agent else agent_of(v)
        record = record.model_copy(update={
            "cases": merged, "totals": Totals.of(merged), "ended": ended, "agent": agent,
            "status": "interrupted" if unfinished else "complete", "unfinished": unfinished,
            "spend": spent(controls.spend).plus(resume.spend if resume else None)})
        records[v.label] = record
        if prep.store_failed is None:
            try:
                await prep.store.finish_run(record)
            except StoreUnavailable as exc:
                prep.store_failed = str(exc)
    # The store's writer may still be retrying what a down store missed (its flush gave up):
    # the file catches up first, so the store never gets a case the file lacks. (Left set by
    # a run that raised, the hook writes nothing more: its store ends with the run.)
    catch_up()
    prep.store.before_write = None
    for error in prep.store.write_errors:
        print(f"warning: a result was not stored ({error}); the artifact has it",
              file=sys.stderr)
    return records
