"""A model call is made once: every job's model (chat, judge, visitor, drafting) is wrapped so
that a call whose reply is in the call cache is replayed instead of made.

The key is a hash of what decides the reply:
- the model as resolved: its transport's identity (evals: `identity()` of app/chat's models; the
  embedded model by its file's sha256, never by the port its server happens to have);
- the full request: messages, tools, tool choice, response format and sampling settings,
  with the run's own blob server written as one marker (BLOB_MARK): a manual's address is in
  what the model reads (search results, attached manuals), and the port it is served on is the
  run's, not the request's;
- the sample index: the repetition and the attempt (and which time this same request comes in
  that sample), so repeats and retries stay independent samples.
Tools still run on a replay and checks always re-run on the transcript: whatever changes what
the model is asked misses the cache; whatever does not is free.

A replay gives back exactly what was kept. The one thing written into a reply on its way back
is the replaying run's blob server, where the kept reply holds BLOB_MARK: a marker with NUL
characters, which no text can hold where it matters. A request or a reply that holds a NUL
itself is never kept (the call is made), so every BLOB_MARK in a kept reply is one the cache
wrote, and a reply that holds any address at all as text, the cache's old placeholder
included, comes back as the model gave it. (Writing the address as ordinary text, as key
version 2 did, let text that a visitor or a case author controls become the run's address on
a replay.)

Nothing is kept that the run's records would redact (app/redact.py): a reply holding a secret,
or a piece of one, is made again on every run instead. Kept, it would outlive the secret's
variable, and a later run that does not know the value as a secret would replay it into
evidence that is never removed; kept redacted, its replay would differ from what the model
said. Such replies are rare, and each is said once.

Each sample's calls are tallied (made, replayed, the replayed ones' tokens and runs): the
runner records them on the attempt, counted apart from what was spent. An entry keeps what its
call took when it was made (`latency_ms`, around the wrapped model's call: its retries and its
wait for a slot included, as the attempt's own latency has them); a replay adds that to its
job's tally, so an item's latency limit decides a replayed attempt as it would have the
original (evals/checks/spend.py). An entry kept before latencies were has none: its replay
leaves the latency unknown.

The key and the entry themselves are evals/execute/cache_entry.py's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from app.chat.declared import Wrapping
from app.chat.models import ChatModel
from app.chat.reply import ModelReply, Usage
from app.db import Database
from app.redact import secret_values
from evals.execute.cache_entry import (
    BLOB_MARK,
    COST_KEY,
    LATENCY_KEY,
    NUL,
    call_cost,
    call_key,
    cost_of,
    hashed,
    keyable,
    latency_of,
    pinned,
    replaced,
    reply_from,
    reply_json,
    request_of,
    strings,
    unkept,
)
from evals.record.call_cache import CachedReply, CallCache, Entry
from evals.settings import Policy, eval_settings


@dataclass(frozen=True)
class CacheUse:
    """A run's call cache and its policy: reuse (replay what is there, keep what is made),
    refresh (make every call, keep it over what is there) or off (no cache at all)."""

    cache: CallCache | None
    policy: Policy = "reuse"


@dataclass
class Tally:
    """One sample's model calls: made, replayed, and what the replayed ones had cost and
    taken."""

    made: int = 0
    replayed: int = 0
    replayed_prompt_tokens: int = 0
    replayed_completion_tokens: int = 0
    # Per job ("chat", "judge", "visitor"): the replayed replies' usage, as recorded.
    replayed_by_job: dict[str, Usage] = field(default_factory=dict)
    # Per job: the replays, and what their calls took when made (ms, less any wait here for
    # the very call in flight: that wait is in the measured time already); None once one of
    # them has no latency recorded (an entry kept before latencies were).
    replayed_calls_by_job: dict[str, int] = field(default_factory=dict)
    replayed_ms_by_job: dict[str, int | None] = field(default_factory=dict)
    # Per job: what the replayed calls cost when made; None once one recorded no cost.
    replayed_cost_by_job: dict[str, float | None] = field(default_factory=dict)
    runs: set[str] = field(default_factory=set)
    seen: dict[str, int] = field(default_factory=dict)  # request hash -> times asked


@dataclass(frozen=True)
class Sample:
    repetition: int
    attempt: int
    tally: Tally
    run_id: str | None = None  # the run (version) the sample is of: its calls are kept under it


_SAMPLE: ContextVar[Sample | None] = ContextVar("eval_sample", default=None)


@contextmanager
def sample(repetition: int, attempt: int, run_id: str | None = None) -> Iterator[Tally]:
    """The model calls made inside are this sample's (keyed by it, tallied in what it yields,
    kept under `run_id`)."""
    tally = Tally()
    token = _SAMPLE.set(Sample(repetition, attempt, tally, run_id))
    try:
        yield tally
    finally:
        _SAMPLE.reset(token)


_UNKEPT = {
    "nul": "a reply holding a NUL character is not kept: such calls are made each run",
    "secret": "a reply holding a secret (or a piece of one) is not kept: such calls are made"
              " each run, and the run's records hold it redacted",
}


class Cached(Wrapping):
    """A model (any ChatModel, usually a guard) whose calls go through the call cache: the
    same interface. A replay costs no model call, no concurrency slot and no cost."""

    def __init__(self, model: ChatModel, cache: CallCache, *, job: str, run_id: str | None,
                 policy: Policy = "reuse", blob_base: str | None = None) -> None:
        self.model = model
        self.model_id: str = model.model_id
        self.cache = cache
        self.job = job
        self.run_id = run_id
        self.policy = policy
        # the run's blob server: a constant in the keys and the kept replies
        self.blob_base = blob_base.rstrip("/") if blob_base else None
        self._identity = dict(model.identity())
        self._pinned = pinned(self._identity)
        self._secrets = secret_values()  # what a kept reply may not hold (read once)

    async def complete(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
        current = _SAMPLE.get()
        tally = current.tally if current is not None else Tally()
        if not keyable(messages, tools, kw):
            self.cache.warn("nul request", "a request holding a NUL character is neither looked"
                                           " up nor kept: such calls are made each run")
            made_now = await self.model.complete(messages, tools, **kw)
            tally.made += 1
            return made_now
        request = request_of(messages, tools, kw, self.blob_base)
        asked = hashed(request)
        occurrence = tally.seen.get(asked, 0)
        tally.seen[asked] = occurrence + 1
        key = call_key(self._identity, request, current.repetition if current else 0,
                       current.attempt if current else 0, occurrence)
        if self.policy == "reuse":
            reply = await self._earlier(key, tally)
            if reply is not None:
                return reply
        # One call for a key at a time: another version asking the very same thing meanwhile
        # (a comparison of two agents that tell a context the same) waits for this one.
        made: asyncio.Future[CachedReply | None] = asyncio.get_running_loop().create_future()
        self.cache.inflight[key] = made
        started = time.perf_counter()
        try:
            reply = await self.model.complete(messages, tools, **kw)
        except BaseException:
            # Whoever waits makes the call itself (N waiters: N calls, each under the guard's
            # retry and breaker, as any call is).
            made.set_result(None)
            raise
        finally:
            if self.cache.inflight.get(key) is made:
                del self.cache.inflight[key]
        took_ms = int((time.perf_counter() - started) * 1000)
        tally.made += 1
        data = reply_json(reply)
        why = unkept(data, self._secrets)
        if why is not None:
            self.cache.warn(why, _UNKEPT[why])
            made.set_result(None)  # whoever waits for it makes the call
            return reply
        # Kept without this run's blob address, as its key is: a replay in a run whose
        # manuals are served on another port cites that run's pages (see _replayed).
        if self.blob_base:
            data = replaced(data, self.blob_base, BLOB_MARK)
        data[LATENCY_KEY] = took_ms
        data[COST_KEY] = call_cost(self.model_id, reply)
        run_id = (current.run_id if current is not None else None) or self.run_id
        made.set_result(CachedReply(data, run_id))
        self.cache.put(Entry(key, self.model_id, self._pinned, run_id, data),
                       over=self.cache.is_bad(key))
        return reply

    async def _earlier(self, key: str, tally: Tally) -> ModelReply | None:
        """The reply to this key made earlier (in the cache) or being made now (in flight)."""
        pending = self.cache.inflight.get(key)
        if pending is None:
            hit = await self.cache.get(key)
            if hit is not None:
                return self._replayed(key, hit, tally)
            pending = self.cache.inflight.get(key)  # it may have started meanwhile
        if pending is not None:
            started = time.perf_counter()
            shared = await asyncio.shield(pending)
            if shared is not None:
                waited_ms = int((time.perf_counter() - started) * 1000)
                return self._replayed(key, shared, tally, waited_ms)
        return None

    def _replayed(self, key: str, hit: CachedReply, tally: Tally,
                  waited_ms: int = 0) -> ModelReply | None:
        """The kept reply as this run's, tallied with its tokens and what its call took (less
        `waited_ms`, the time spent here waiting for it in flight, which the attempt's own
        measured time holds)."""
        data = replaced(hit.reply, BLOB_MARK, self.blob_base) if self.blob_base else hit.reply
        try:
            if any(NUL in s for s in strings(data)):  # a blob server this run does not have
                raise ValueError("it holds a blob server's address and this run has none")
            reply = reply_from(data)
        except ValueError:
            self.cache.warn("shape", f"entry {key[:12]} is not a reply of the shape kept now:"
                                     " read as a miss, and written again")
            self.cache.mark_bad(key)
            return None
        tally.replayed += 1
        u = reply.usage
        tally.replayed_prompt_tokens += u.prompt_tokens
        tally.replayed_completion_tokens += u.completion_tokens
        tally.replayed_by_job[self.job] = tally.replayed_by_job.get(self.job, Usage()) + u
        calls = tally.replayed_calls_by_job
        calls[self.job] = calls.get(self.job, 0) + 1
        cost, spent = cost_of(hit.reply), tally.replayed_cost_by_job.get(self.job, 0.0)
        tally.replayed_cost_by_job[self.job] = None if cost is None or spent is None else \
            spent + cost
        took, before = latency_of(hit.reply), tally.replayed_ms_by_job.get(self.job, 0)
        tally.replayed_ms_by_job[self.job] = None if took is None or before is None else \
            before + max(0, took - waited_ms)
        if hit.run_id:
            tally.runs.add(hit.run_id)
        return reply


def cached(model: Any, cache: CallCache | None, *, job: str, run_id: str | None = None,
           policy: Policy = "reuse", blob_base: str | None = None) -> Any:
    """The model through the cache, or the model itself when there is none (policy off);
    `blob_base` is the base address of the run's blob server (its manuals' addresses)."""
    if cache is None or policy == "off" or model is None:
        return model
    return Cached(model, cache, job=job, run_id=run_id, policy=policy, blob_base=blob_base)


def call_cache(db: Database, policy: Policy) -> CallCache | None:
    """The call cache on the run store's database under a policy (None when off), bounded by
    EVAL_CACHE_TTL and EVAL_CACHE_MAX_MB."""
    if policy == "off":
        return None
    env = eval_settings()
    return CallCache(db, ttl_s=env.cache_ttl, refresh=policy == "refresh",
                     max_bytes=env.cache_max_mb << 20)
