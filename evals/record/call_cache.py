"""The model-call cache in the run store: one reply per call key, kept as the JSON text it was
written as, with its sha256.

The key (made in evals/execute/cache.py) is a hash of everything that decides a reply; here it
is only looked up and written. An entry that is corrupt, cut short or of an unreadable shape
is a miss, said once per run, never a crash or a wrong replay. Entries of a checksum-pinned
local model file never expire; any other model's expire after the TTL (a provider can change
a model behind its id). Writes and the "used" marks of hits go through one writer task in
batches, so a call never waits on a write; the store failing makes misses, never a failed run.
Two runs writing one key at once keep one entry (the first, or with `refresh` the last); a
batch PostgreSQL ends as a deadlock with another run's is written again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from dataclasses import dataclass
from typing import Any

import psycopg
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_random

from app.db import Database, failure

WRITE_BATCH = 50
FLUSH_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 5.0
# What a run holds back of its writes when the store is failing: past this, it stops writing.
MAX_QUEUED = 5000
# Two runs' writes that waited on each other: PostgreSQL ended one; it is written again.
_CONFLICT = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)


@dataclass(frozen=True)
class CachedReply:
    """A reply read back from the cache, and the run that made it."""

    reply: dict[str, Any]
    run_id: str | None


@dataclass(frozen=True)
class Entry:
    key: str
    model: str
    pinned: bool
    run_id: str | None
    reply: dict[str, Any]


@dataclass(frozen=True)
class CacheStats:
    entries: int
    bytes: int
    pinned: int
    expired: int  # hosted entries past the TTL (read as misses; removed by trim or clear)
    by_model: list[tuple[str, int, int]]  # model, entries, bytes
    oldest: Any
    newest: Any


def reply_text(reply: dict[str, Any]) -> tuple[str, int, str]:
    """The stored text of a reply, its size in bytes and its sha256. A reply holding text
    UTF-8 cannot encode (a lone surrogate: half an emoji a provider escaped) is stored with its
    non-ASCII escaped, which reads back as the same reply."""
    text = json.dumps(reply, sort_keys=True, ensure_ascii=False)
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        text = json.dumps(reply, sort_keys=True, ensure_ascii=True)
        encoded = text.encode()
    return text, len(encoded), hashlib.sha256(encoded).hexdigest()


class CallCache:
    """Reads and writes of the call cache, on the run store's database."""

    def __init__(self, db: Database, *, ttl_s: float, refresh: bool = False,
                 max_bytes: int | None = None) -> None:
        self.db = db
        self.ttl_s = ttl_s
        self.refresh = refresh  # write over an entry instead of keeping the first
        self.max_bytes = max_bytes
        self._queue: asyncio.Queue[Entry | str] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self.warnings: list[str] = []  # each said once, on stderr, as it happens
        self._said: set[str] = set()
        self.dropped = 0  # writes left out while the store was failing
        # Calls being made now, by key: a second asker of one waits for it (one call a key).
        self.inflight: dict[str, asyncio.Future[CachedReply | None]] = {}
        # What this process wrote, served before the store has it (writes are batched).
        self.written: dict[str, CachedReply] = {}
        # Keys whose entry is whole but not a reply (an older shape): written over.
        self._bad: set[str] = set()

    def warn(self, what: str, detail: str) -> None:
        if what not in self._said:
            self._said.add(what)
            line = f"call cache: {detail}"
            self.warnings.append(line)
            print(f"warning: {line}", file=sys.stderr)

    async def get(self, key: str) -> CachedReply | None:
        """The entry for a key, if it is there, whole and not expired; None otherwise."""
        if key in self.written:
            self._enqueue(key)
            return self.written[key]
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                row = await self.db.fetchone(
                    "SELECT run_id, digest, reply FROM eval_call_cache WHERE key = %s AND"
                    " (pinned OR created_at > now() - make_interval(secs => %s))",
                    (key, self.ttl_s))
        except (psycopg.Error, TimeoutError, OSError) as exc:
            self.warn("read", f"a lookup failed ({failure(exc, READ_TIMEOUT_S)}): such calls"
                               " are made, not replayed")
            return self.written.get(key)
        if row is None:  # written by this process while the store was asked?
            return self.written.get(key)
        text = row["reply"]
        if not isinstance(text, str) or hashlib.sha256(text.encode()).hexdigest() != \
                row["digest"]:
            self.warn("corrupt", f"entry {key[:12]} does not match its checksum (corrupt or"
                                  " cut short): read as a miss, and written again")
            return None
        try:
            reply = json.loads(text)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self.warn("corrupt", f"entry {key[:12]} is not a reply: read as a miss, and"
                                 " written again")
            self.mark_bad(key)
            return None
        self._enqueue(key)
        return CachedReply(reply, row["run_id"])

    def mark_bad(self, key: str) -> None:
        """The entry there is whole but unreadable: the next write of its key replaces it."""
        self._bad.add(key)

    def is_bad(self, key: str) -> bool:
        return key in self._bad

    def put(self, entry: Entry, *, over: bool = False) -> None:
        """Queue an entry for writing (by the writer task, in batches); `over` writes it over
        whatever is there."""
        if len(self.written) < MAX_QUEUED:
            self.written[entry.key] = CachedReply(entry.reply, entry.run_id)
        if over:
            self._bad.add(entry.key)
        self._enqueue(entry)

    def _enqueue(self, item: Entry | str) -> None:
        if self._queue.qsize() >= MAX_QUEUED:
            self.dropped += 1
            return
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop())
        self._queue.put_nowait(item)

    async def _write_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < WRITE_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                async for attempt in AsyncRetrying(
                        retry=retry_if_exception_type(_CONFLICT), stop=stop_after_attempt(4),
                        wait=wait_random(0.05, 0.5), reraise=True):
                    with attempt:
                        await self._write(batch)
            except Exception as exc:  # whatever it is, the run goes on; made again next time
                self.warn("write", f"writing {len(batch)} entr{'y' if len(batch) == 1 else 'ies'}"
                                    f" failed ({failure(exc, self.db.timeout_s)}): they are"
                                    " not kept")
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _write(self, batch: list[Entry | str]) -> None:
        used = sorted({b for b in batch if isinstance(b, str)})
        rows: list[tuple[Any, ...]] = []
        over: list[tuple[Any, ...]] = []
        # In key order within each statement; the statements of two runs' batches can still
        # wait on each other, and PostgreSQL ends one of them (a deadlock): the writer tries
        # that batch again.
        for e in sorted((b for b in batch if isinstance(b, Entry)), key=lambda e: e.key):
            try:
                text, size, digest = reply_text(e.reply)
            except (TypeError, ValueError) as exc:  # one entry that cannot be kept, not the batch
                self.warn("unwritable", f"entry {e.key[:12]} cannot be written ({exc}): it is"
                                        " not kept")
                continue
            row = (e.key, e.model, e.pinned, e.run_id, size, digest, text)
            (over if self.refresh or e.key in self._bad else rows).append(row)
        async with self.db.transaction() as conn, conn.cursor() as cur:
            insert = "INSERT INTO eval_call_cache (key, model, pinned, run_id, bytes, digest," \
                " reply) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) "
            if rows:
                await cur.executemany(insert + _REPLACE_BAD, [(*r, self.ttl_s) for r in rows])
            if over:
                await cur.executemany(insert + _OVERWRITE, over)
            if used:
                await cur.execute("UPDATE eval_call_cache SET used_at = now()"
                                  " WHERE key = ANY(%s)", (used,))

    async def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait for the queued writes (at most `timeout_s`); False when some are left."""
        if self._writer is None or self._writer.done():
            return self._queue.empty()
        try:
            async with asyncio.timeout(timeout_s):
                await self._queue.join()
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        """Write what is queued (bounded), trim the cache to its bounds, stop the writer."""
        await self.flush()
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
        try:
            await trim(self.db, self.ttl_s, self.max_bytes)
        except (psycopg.Error, TimeoutError, OSError) as exc:
            self.warn("trim", f"trimming failed ({failure(exc, self.db.timeout_s)})")


# Written over by `refresh`, and by any run when the entry there is bad or expired.
_OVERWRITE = (
    "DO UPDATE SET model = excluded.model, pinned = excluded.pinned, run_id = excluded.run_id,"
    " created_at = now(), used_at = now(), bytes = excluded.bytes, digest = excluded.digest,"
    " reply = excluded.reply")
# A key two runs write at once keeps the first entry: a run writes only what it missed, so the
# entry there is one that was bad (its checksum does not match) or expired, or one another run
# has just written (kept). An entry whole but of another shape is written over (`_bad`).
_REPLACE_BAD = _OVERWRITE + (
    " WHERE encode(sha256(convert_to(eval_call_cache.reply, 'UTF8')), 'hex')"
    " <> eval_call_cache.digest OR (NOT eval_call_cache.pinned AND"
    " eval_call_cache.created_at <= now() - make_interval(secs => %s))")


async def trim(db: Database, ttl_s: float, max_bytes: int | None) -> int:
    """Remove the hosted entries past the TTL, then the least recently used until the cache
    holds at most `max_bytes`. Returns the entries removed."""
    removed = await db.fetchone(
        "WITH gone AS (DELETE FROM eval_call_cache WHERE NOT pinned AND"
        " created_at < now() - make_interval(secs => %s) RETURNING 1)"
        " SELECT count(*) AS n FROM gone", (ttl_s,))
    n = int(removed["n"]) if removed else 0
    if max_bytes is not None:
        over = await db.fetchone(
            "WITH ranked AS (SELECT key, sum(bytes) OVER (ORDER BY used_at DESC, key)"
            " AS upto FROM eval_call_cache), gone AS (DELETE FROM eval_call_cache c USING"
            " ranked r WHERE c.key = r.key AND r.upto > %s RETURNING 1)"
            " SELECT count(*) AS n FROM gone", (max_bytes,))
        n += int(over["n"]) if over else 0
    return n


async def stats(db: Database, ttl_s: float) -> CacheStats:
    head = await db.fetchone(
        "SELECT count(*) AS entries, coalesce(sum(bytes), 0) AS bytes,"
        " count(*) FILTER (WHERE pinned) AS pinned,"
        " count(*) FILTER (WHERE NOT pinned AND created_at < now() - make_interval(secs => %s))"
        " AS expired, min(created_at) AS oldest, max(created_at) AS newest"
        " FROM eval_call_cache", (ttl_s,))
    assert head is not None
    rows = await db.fetch("SELECT model, count(*) AS n, coalesce(sum(bytes), 0) AS bytes"
                          " FROM eval_call_cache GROUP BY model ORDER BY count(*) DESC, model")
    return CacheStats(int(head["entries"]), int(head["bytes"]), int(head["pinned"]),
                      int(head["expired"]), [(r["model"], int(r["n"]), int(r["bytes"]))
                                             for r in rows], head["oldest"], head["newest"])


async def clear(db: Database, *, model: str | None = None, expired_only: bool = False,
                ttl_s: float = 0.0) -> int:
    """Remove entries (all, one model's, or the expired ones); a run going on meanwhile sees
    misses, never a failure. Returns the entries removed."""
    where, params = ["true"], []
    if model is not None:
        where.append("model = %s")
        params.append(model)
    if expired_only:
        where.append("NOT pinned AND created_at < now() - make_interval(secs => %s)")
        params.append(ttl_s)  # type: ignore[arg-type]
    row = await db.fetchone(f"WITH gone AS (DELETE FROM eval_call_cache WHERE"
                            f" {' AND '.join(where)} RETURNING 1) SELECT count(*) AS n"
                            " FROM gone", tuple(params))
    return int(row["n"]) if row else 0
