"""One or more agent versions run over one plan, stored as they go: what `run`, `compare` and
`gate` share. Each variant's run is a RunRecord in the run store; each finished case is written
as soon as it finishes."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from app.settings import Settings
from evals.execute.harness import EvalEnv, clean_stale, compose_case, eval_env
from evals.execute.runner import JudgeSetup, Variant, check_frozen, run_variants
from evals.load.cases import Case
from evals.record.fingerprint import (
    AgentInfo,
    FrozenContext,
    PlanInfo,
    agent_info,
    context_key,
    git_state,
)
from evals.record.results import CaseResult, RunRecord
from evals.record.store import RunStore, new_run_id
from evals.report.console import totals


@dataclass
class Prepared:
    env: EvalEnv
    store: RunStore
    settings: Settings


@asynccontextmanager
async def prepared(settings: Settings) -> AsyncIterator[Prepared]:
    """The run store and a fresh eval environment on the same PostgreSQL server, made side by
    side; the embedder loads in the background (the first case rarely needs it at once)."""
    from app.db import resolve_conninfo
    from app.manuals.embed import default_embedder

    url = settings.database_url.get_secret_value() if settings.database_url else None
    conninfo = resolve_conninfo(url, settings.data_dir)
    from app.chat.openai_wire import warm_import

    embedder = default_embedder()
    # Work that can go on while PostgreSQL makes the run's database: the HTTP client's import,
    # then the embedder's model.
    def warm() -> None:
        import pgvector.psycopg  # noqa: F401  (numpy with it: needed once the clone is ready)

        warm_import()
        getattr(embedder, "load", lambda: None)()

    warming = asyncio.create_task(asyncio.to_thread(warm))
    for name in await clean_stale(conninfo):
        print(f"removed {name}, left by an eval run whose process is gone")
    async with AsyncExitStack() as stack:
        store, env = await asyncio.gather(
            stack.enter_async_context(RunStore.open(conninfo)),
            stack.enter_async_context(eval_env(conninfo, settings, embedder)))
        try:
            yield Prepared(env, store, settings)
        finally:
            await asyncio.gather(warming, return_exceptions=True)


async def compose_contexts(env: EvalEnv, cases: list[Case]) -> dict[str, FrozenContext]:
    """What the assistant is told for each audience and page these cases use."""
    out: dict[str, FrozenContext] = {}
    for case in cases:
        key = context_key(case)
        if key not in out:
            composed = (await compose_case(env, case)).composed
            out[key] = FrozenContext(system_prompt=composed.system_prompt,
                                     tools=composed.tool_schemas())
    return out


def agent_settings(settings: Settings) -> dict[str, Any]:
    return {"max_tool_steps": settings.max_tool_steps}


async def all_contexts(env: EvalEnv, cases: list[Case]) -> dict[str, FrozenContext]:
    """Every context of a plan: the demo catalogue's, then (seeding it) the lab's."""
    contexts = await compose_contexts(env, [c for c in cases if c.context.catalog == "demo"])
    lab = [c for c in cases if c.context.catalog == "lab"]
    if lab:
        await env.use_lab()
        contexts.update(await compose_contexts(env, lab))
    return contexts


class PlanMismatch(ValueError):
    """A frozen agent that lacks a context the plan uses."""


def validate_versions(cases: list[Case], versions: list[Version]) -> None:
    """Refuse, before anything runs or is written, a frozen agent that lacks a context the
    plan uses or was given a tool that no longer exists."""
    keys = {context_key(c) for c in cases}
    for v in versions:
        if v.frozen is not None:
            missing = sorted(keys - set(v.frozen.contexts))
            if missing:
                raise PlanMismatch(f"the frozen agent of {v.label} has no context for"
                                   f" {', '.join(missing)}")
            check_frozen(v.frozen.contexts)


@dataclass
class Version:
    """An agent version to run: a label, a model, and a frozen agent (a point's) or None for
    today's code."""

    label: str
    model: Any  # ChatModel
    frozen: AgentInfo | None = None
    ref: str | None = None  # how the model was asked for ("local", or an id)


@dataclass
class Controls:
    """How a run may be cut short: a stop (Ctrl-C, SIGTERM) and a cost cap."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    max_cost_usd: float | None = None


async def run_versions(
    prep: Prepared, cases: list[Case], versions: list[Version], plan: PlanInfo, *,
    concurrency: int, vision: bool | None, judge: JudgeSetup | None,
    settings_extra: dict[str, Any], point: str | None = None,
    progress: Callable[[str], None] | None = None, controls: Controls | None = None,
    resume: RunRecord | None = None,
) -> dict[str, RunRecord]:
    """Run every version over the plan, interleaved; store each run as it goes. A stopped run
    is stored as interrupted, its unfinished cases listed; `resume` finishes such a run (one
    version) under the same id."""
    controls = controls or Controls()
    validate_versions(cases, versions)
    current = await compose_contexts(prep.env, [c for c in cases
                                                if c.context.catalog == "demo"])
    started = dt.datetime.now(dt.UTC).isoformat()
    git = await asyncio.to_thread(git_state)  # once a run, off the loop (two git processes)
    # Started from the workspace: its launch id, by which it finds this run's progress.
    launch = {"launch": os.environ["EVAL_LAUNCH"]} if os.environ.get("EVAL_LAUNCH") else {}
    records: dict[str, RunRecord] = {}
    done_before: set[tuple[str, str, int]] = set()
    for v in versions:
        agent = v.frozen or agent_info(v.model.model_id, agent_settings(prep.settings), current,
                                       git, model_ref=v.ref)
        if resume is not None:
            records[v.label] = resume.model_copy(update={"status": "running"})
            done_before |= {(v.label, r.id, r.repetition) for r in resume.cases}
            await prep.store.finish_run(records[v.label])
            continue
        records[v.label] = RunRecord(
            run_id=new_run_id(), status="running", started=started,
            settings={"chat_model": v.model.model_id, "concurrency": concurrency,
                      "repeat": plan.repeat, "selection": plan.selection,
                      "order": [c.id for c in cases], "version": v.label, **settings_extra,
                      **launch},
            models={"chat": v.model.model_id},
            judge_model=judge.model.model_id if judge else None,
            judge_trusted_by_flag=bool(judge and judge.forced and not judge.trust.trusted),
            plan=plan, agent=agent, point=point if v.frozen is not None else None)
        await prep.store.start_run(records[v.label])

    async def done(label: str, result: CaseResult) -> None:
        await prep.store.save_case(records[label].run_id or "", result)
        if progress is not None:
            name = f"{label}: {result.id}" if len(versions) > 1 else result.id
            progress(f"{result.status:<9} {name}")

    async def on_lab() -> None:
        current.update(await compose_contexts(prep.env, [c for c in cases
                                                         if c.context.catalog == "lab"]))

    variants = [Variant(v.label, v.model, v.frozen.contexts if v.frozen else None)
                for v in versions]
    results = await run_variants(prep.env, cases, variants, concurrency=concurrency,
                                 vision=vision, judge=judge, on_done=done, repeat=plan.repeat,
                                 on_lab=on_lab, stop=controls.stop,
                                 max_cost_usd=controls.max_cost_usd, skip=done_before)
    ended = dt.datetime.now(dt.UTC).isoformat()
    for v in versions:
        record = records[v.label]
        earlier = {(r.id, r.repetition): r for r in record.cases}
        now = {(r.id, r.repetition): r for r in results[v.label]}
        merged = [r for c in cases for rep in range(1, plan.repeat + 1)
                  if (r := now.get((c.id, rep)) or earlier.get((c.id, rep))) is not None]
        unfinished = [f"{c.id}#{rep}" for c in cases for rep in range(1, plan.repeat + 1)
                      if (c.id, rep) not in now and (c.id, rep) not in earlier]
        if resume is not None and record.agent is not None:
            agent = record.agent  # the version the run began with
        else:
            agent = v.frozen or agent_info(v.model.model_id, agent_settings(prep.settings),
                                           current, git, model_ref=v.ref)
        record = record.model_copy(update={
            "cases": merged, "totals": totals(merged), "ended": ended, "agent": agent,
            "status": "interrupted" if unfinished else "complete", "unfinished": unfinished})
        await prep.store.finish_run(record)
        records[v.label] = record
    for error in prep.store.write_errors:
        print(f"warning: a result was not stored ({error}); the artifact has it",
              file=sys.stderr)
    return records
