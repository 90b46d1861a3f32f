"""A worker of a distributed run: one per node, made an actor (a Ray actor) by the driver. It
owns that node's harness (a database of its own, the blob server for the manuals, and the
embedded model server when the run uses it) and runs the same runner code as a run in one
process, over the shards the driver hands it, streaming each finished item back."""

from __future__ import annotations

import asyncio
import os
import resource
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

from app import embed
from app.chat.models import ChatModel, model_for_job
from app.db import connect, resolve_conninfo
from app.embed import Embedder
from app.localmodel import local_model_settings
from app.settings import Settings
from evals.execute.cache import CacheUse, call_cache
from evals.execute.cluster.shards import Shard
from evals.execute.cluster.spend import SharedSpend
from evals.execute.cluster.transport import Actor
from evals.execute.env import EvalEnv, eval_env
from evals.execute.guard import Spend
from evals.execute.runner import Variant, run_variants
from evals.judge.setup import JudgeSetup, PackPrompt
from evals.judge.trust import Trust
from evals.record.fingerprint import FrozenContext
from evals.record.repetitions import RepeatRule
from evals.record.results import CaseResult
from evals.record.store import RunStore
from evals.settings import Policy

REACH_S = 3.0  # how long a worker tries the run's PostgreSQL server before using its own


@dataclass(frozen=True)
class VariantSpec:
    """A variant as a worker builds it: its chat model asked for as the run asked (None: the
    chat job's model), its frozen agent, and the run its calls are kept under."""

    label: str
    ref: str | None
    frozen: dict[str, FrozenContext] | None = None
    run_id: str | None = None
    max_steps: int | None = None  # the frozen agent's recorded tool-step limit


@dataclass(frozen=True)
class JudgeSpec:
    """The run's judge as the driver decided it (trust included), its model asked for again
    on the worker."""

    ref: str | None
    trust: Trust
    forced: bool = False
    pack: PackPrompt | None = None
    pack_trust: Trust | None = None
    advisory: bool = False
    questions: dict[str, Trust] = field(default_factory=dict)

    @classmethod
    def of(cls, judge: JudgeSetup, ref: str | None) -> JudgeSpec:
        return cls(ref, judge.trust, judge.forced, judge.pack, judge.pack_trust, judge.advisory,
                   dict(judge.questions))

    def setup(self, settings: Settings) -> JudgeSetup:
        return JudgeSetup(model_for_job(settings, "judge", self.ref), self.trust, self.forced,
                          self.pack, self.pack_trust, self.advisory, dict(self.questions))


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs to run its shards as the run does."""

    settings: Settings  # the app's, with no model server of the driver's in them
    local_model: bool  # the run uses the embedded model: the worker starts it on its node
    server: str  # the run's PostgreSQL server; unreachable, the node's own embedded one
    variants: tuple[VariantSpec, ...]
    judge: JudgeSpec | None
    visitor: bool  # the items hold conversations: the simulated visitor (sim_user job)
    concurrency: int
    vision: bool | None
    repeat: int
    rule: RepeatRule | None
    cache: Policy
    max_cost_usd: float | None = None
    budget: Actor | None = None  # the Budget actor, with a cost cap
    owner: str = ""  # where the worker is, the name its share of the budget is kept under
    embedder: Embedder | None = None  # None: the real one (embed.default_embedder)


async def _reachable(conninfo: str) -> bool:
    try:
        async with asyncio.timeout(REACH_S):
            async with await connect(conninfo, REACH_S, autocommit=True,
                                     connect_timeout_s=REACH_S) as conn:
                await conn.execute("SELECT 1")
        return True
    except (psycopg.Error, TimeoutError, OSError):
        return False


async def _answering(bases: set[str]) -> None:
    """Every OpenAI-compatible server this worker will call answers HTTP at all (any status):
    a worker whose model server is not there is better named at the start than its items
    lost one by one."""
    async with httpx.AsyncClient(timeout=REACH_S) as client:
        for base in sorted(bases):
            try:
                await client.get(f"{base.rstrip('/')}/models")
            except httpx.HTTPError as exc:
                raise RuntimeError(f"the model server {base} does not answer"
                                   f" ({type(exc).__name__})") from exc


class ShardWorker:
    """One node's harness and runner (a Ray actor: `start`, then `run_shard` for each shard,
    `halt` to stop, `close` at the end)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.stop = asyncio.Event()
        self._stack = AsyncExitStack()
        self.env: EvalEnv | None = None
        self.variants: list[Variant] = []
        self.judge: JudgeSetup | None = None
        self.visitor: ChatModel | None = None
        self.cache = CacheUse(None, "off")
        self.limit = asyncio.Semaphore(spec.concurrency)
        self.spend: Spend = SharedSpend(spec.budget, spec.max_cost_usd, spec.owner) \
            if spec.budget is not None else Spend(spec.max_cost_usd)
        self.items_run = 0

    async def start(self) -> str:
        """Open the harness; its name, or an error that names what could not start."""
        spec = self.spec
        settings = self._stack.enter_context(local_model_settings(spec.settings,
                                                                  spec.local_model))
        server = spec.server if await _reachable(spec.server) else \
            await asyncio.to_thread(resolve_conninfo, None, settings.data_dir)
        embedder = spec.embedder or embed.default_embedder()
        self.env = await self._stack.enter_async_context(eval_env(server, settings, embedder))
        if spec.cache != "off":
            store = await self._stack.enter_async_context(RunStore.open(server))
            calls = call_cache(store.db, spec.cache)
            if calls is not None:
                self._stack.push_async_callback(calls.close)
            self.cache = CacheUse(calls, spec.cache)
        self.variants = [Variant(v.label, model_for_job(settings, "chat", v.ref), v.frozen,
                                 v.max_steps, run_id=v.run_id) for v in spec.variants]
        self.judge = spec.judge.setup(settings) if spec.judge is not None else None
        self.visitor = model_for_job(settings, "sim_user") if spec.visitor else None
        models = [v.model for v in self.variants] + [self.visitor] + \
            [self.judge.model if self.judge else None]
        await _answering({base for m in models
                          if m is not None and (base := m.api_base) is not None})
        return self.name

    async def run_shard(self, shard: Shard, done: Mapping[tuple[str, str, int], str]
                        ) -> AsyncIterator[tuple[str, str]]:
        """Run one shard's items (less those `done`), yielding (variant, the CaseResult as
        JSON) as each finishes; several shards share the worker's limit and budget."""
        if self.env is None:
            raise RuntimeError(f"worker {self.name} was not started")
        finished: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

        async def on_done(label: str, result: CaseResult) -> None:
            finished.put_nowait((label, result.model_dump_json()))

        spec = self.spec
        running = asyncio.create_task(run_variants(
            self.env, shard.items, self.variants, concurrency=spec.concurrency,
            vision=spec.vision, judge=self.judge, visitor=self.visitor, on_done=on_done,
            repeat=spec.repeat, stop=self.stop, skip=done, rule=spec.rule, cache=self.cache,
            limit=self.limit, spend=self.spend))
        try:
            while not (running.done() and finished.empty()):
                getting = asyncio.ensure_future(finished.get())
                await asyncio.wait({getting, running}, return_when=asyncio.FIRST_COMPLETED)
                if getting.done():
                    self.items_run += 1
                    yield getting.result()
                else:
                    getting.cancel()
            running.result()  # a failure of the runner itself reaches the driver
        finally:
            if not running.done():
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)

    async def halt(self) -> None:
        """Stop: no new model call; items in flight get the runner's grace time."""
        self.stop.set()

    async def stats(self) -> dict[str, Any]:
        """The worker's name, items finished and peak memory (resident, MB)."""
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {"name": self.name, "items": self.items_run, "peak_mb": peak_kb / 1024}

    async def close(self) -> None:
        """Close the harness: the database, the blob server, the model server."""
        await self._stack.aclose()
