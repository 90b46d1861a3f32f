"""The store opened and its write-behind queue: a case is queued the moment it finishes and
written by one writer task, in batches, so a run at concurrency 200 never waits on the store's
connections; a batch the store does not take is kept and tried again until it answers. A case
stored already is never written again (stored evidence is final)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Self

import psycopg
from psycopg.types.json import Jsonb

from app.db import Database
from app.redact import redact, secret_values
from evals.record.results import CaseResult
from evals.record.store.connection import StoreBase, open_database, store_name
from evals.record.store.rows import as_is

# How long a run's end waits for the rows still queued; a write that fails is retried with
# back-off from RETRY_FIRST_S to RETRY_MAX_S.
FLUSH_TIMEOUT_S = 10.0
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 8.0

WRITE_BATCH = 50
# How long the writer lets finished cases gather before it writes them: a batch costs the
# process ~2 ms of CPU whatever its size, and items finish in bursts (bench-compare: +20% CPU
# over two plain runs with a batch per case or two, under +15% with this).
WRITE_GATHER_S = 0.1

Key = tuple[str, str, int]  # run, case, repetition


class CaseWriter(StoreBase):
    """The store's database and the writer of finished cases."""

    def __init__(self, db: Database, name: str = "the run store") -> None:
        super().__init__(db, name)
        self._queue: asyncio.Queue[tuple[str, CaseResult]] = asyncio.Queue()
        self._flushing = asyncio.Event()  # someone waits for the queue: write at once
        self._writer: asyncio.Task[None] | None = None
        self.write_errors: list[str] = []
        self.down: str | None = None  # why the store is failing, while it is
        self.unstored = 0  # finished cases queued or failing, not yet written
        # Called before each batch is written: what must hold every queued case before the
        # store does (the run's artifact, evals/record/artifact.py).
        self.before_write: Callable[[], None] | None = None

    @classmethod
    @asynccontextmanager
    async def open(cls, conninfo: str) -> AsyncIterator[Self]:
        """The store at `conninfo`, migrated; at the end, what is queued is written (unless
        the store is down: a run's end waited already) and the pool closed."""
        name = store_name(conninfo)
        db = await open_database(conninfo, name)
        store = cls(db, name)
        try:
            yield store
        finally:
            await store.flush(0 if store.down else None)
            if store._writer is not None:
                store._writer.cancel()
                await asyncio.gather(store._writer, return_exceptions=True)
            await db.close()

    async def save_case(self, run_id: str, result: CaseResult) -> None:
        """Queue one finished case for writing (at once, by the writer task)."""
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_loop())
        self.unstored += 1
        await self._queue.put((run_id, result))

    async def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every queued case is written, at most `timeout_s` (FLUSH_TIMEOUT_S by
        default); False when some are still unwritten then (the store is down)."""
        if self._writer is None or self._writer.done():
            return self.unstored == 0
        self._flushing.set()
        try:
            async with asyncio.timeout(FLUSH_TIMEOUT_S if timeout_s is None else timeout_s):
                await self._queue.join()
        except TimeoutError:
            return False
        finally:
            self._flushing.clear()
        return True

    async def _write_loop(self) -> None:
        """Write what is queued, in batches (what finished within WRITE_GATHER_S of the first,
        up to WRITE_BATCH). A batch that fails is kept and tried again with
        back-off until the store answers, whatever else is queued meanwhile: the failure is
        said at once, in one line, and so is the store's return."""
        wait = RETRY_FIRST_S
        batch: list[tuple[str, CaseResult]] = []
        while True:
            if not batch:
                batch = [await self._queue.get()]
                if self._queue.qsize() < WRITE_BATCH - 1:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(WRITE_GATHER_S):
                            await self._flushing.wait()
            while len(batch) < WRITE_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if self.before_write is not None:
                try:
                    self.before_write()
                except Exception as exc:  # said; the cases are still stored
                    print(f"warning: before writing to {self.name}: {type(exc).__name__}:"
                          f" {exc}", file=sys.stderr)
            try:
                refused = await self._write(batch)
            except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError,
                    OSError) as exc:
                if self.down is None:
                    self.down = self.failure_of(exc)
                    print(f"warning: {self.name} failed ({self.down}): finished cases go on"
                          " into the artifact; retrying", file=sys.stderr)
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_MAX_S)
                continue
            except Exception as exc:  # a row the store refuses: said at the end, run goes on
                self.write_errors.append(f"{type(exc).__name__}: {exc}")
            else:
                self.write_errors += refused
            if self.down is not None:
                print(f"{self.name} answers again: the cases it missed are written",
                      file=sys.stderr)
                self.down = None
            wait = RETRY_FIRST_S
            self.unstored -= len(batch)
            for _ in batch:
                self._queue.task_done()
            batch = []

    async def _write(self, batch: list[tuple[str, CaseResult]]) -> list[str]:
        """Finished cases with their attempts and checks, in one transaction. A case stored
        already is never written again: the same result (a batch tried again after its commit
        went unanswered) is skipped, another one is refused and said in what this returns."""
        cases, attempts, checks, refused = [], [], [], []
        secrets = secret_values()  # read once a batch, not once a case
        async with self.db.transaction() as conn, conn.cursor() as cur:
            held = await self._held(cur, [(run_id, r.id, r.repetition) for run_id, r in batch])
            for run_id, result in batch:
                text = redact(result.model_dump_json(), secrets)  # redacted once, whole
                data = json.loads(text)
                key = (run_id, result.id, result.repetition)
                if key in held:
                    if held[key] != data:
                        refused.append(f"case {result.id} repetition {result.repetition} of run"
                                       f" {run_id} is stored already with another result; a"
                                       " stored result is never rewritten")
                    continue
                held[key] = data  # the same case twice in one batch is written once
                cases.append((*key, result.file, result.status, Jsonb(text, dumps=as_is)))
                for n, a in enumerate(data["attempts"], start=1):
                    usage = a["usage"]
                    attempts.append((*key, n, a["transcript"]["answer"], a["error"],
                                     a["latency_ms"], usage["prompt_tokens"],
                                     usage["completion_tokens"], a["cost_usd"]))
                    for m, c in enumerate(a["checks"], start=1):
                        checks.append((*key, n, m, c["kind"], c["passed"], c["decided"],
                                       c["error"], c["reason"]))
            if cases:
                await cur.executemany(
                    "INSERT INTO eval_cases (run_id, case_id, repetition, file, status, result)"
                    " VALUES (%s, %s, %s, %s, %s, %s)", cases)
            if attempts:
                await cur.executemany(
                    "INSERT INTO eval_attempts (run_id, case_id, repetition, attempt, answer,"
                    " error, latency_ms, prompt_tokens, completion_tokens, cost_usd)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", attempts)
            if checks:
                await cur.executemany(
                    "INSERT INTO eval_checks (run_id, case_id, repetition, attempt, n, kind,"
                    " passed, decided, error, reason)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", checks)
        return refused

    @staticmethod
    async def _held(cur: psycopg.AsyncCursor[Any], keys: list[Key]) -> dict[Key, Any]:
        """The stored results of these cases (run, case, repetition), for those stored."""
        await cur.execute(
            "SELECT c.run_id, c.case_id, c.repetition, c.result FROM eval_cases c"
            " JOIN unnest(%s::text[], %s::text[], %s::int[]) AS k (run_id, case_id, repetition)"
            " USING (run_id, case_id, repetition)",
            ([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]))
        return {(r["run_id"], r["case_id"], r["repetition"]): r["result"]
                for r in await cur.fetchall()}
