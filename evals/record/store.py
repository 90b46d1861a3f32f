"""The run store: runs, cases, attempts and checks, comparison points and comparisons in
PostgreSQL (the embedded server by default, DATABASE_URL otherwise), with forward migrations
of its own (evals/record/store_migrations/, recorded in eval_schema_migrations).

A case is written the moment it finishes, so an interrupted run keeps what it did, and is never
written again: stored evidence is final (0005_evidence_kept.sql: triggers refuse to change or
remove a stored case, point, comparison or complete run, by the harness or by hand).
Reassessments (assessment.py) and launches (launches.py) are stored beside runs. Runs are read
back through the artifact's reader (older versions upgraded); listings are typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict

from app.db import Database, connect, failure
from app.db.migrate import migrate
from app.redact import redact, secret_values
from evals.record.artifact import read_record
from evals.record.comparison import Comparison
from evals.record.fingerprint import Point
from evals.record.listings import (
    ComparisonSummary,
    FileCount,
    LaunchedRun,
    PointSummary,
    RunSummary,
    StoredComparison,
)
from evals.record.results import CaseResult, Totals
from evals.record.run import RunRecord
from evals.record.upgrade import upgrade_point

MIGRATIONS = Path(__file__).parent / "store_migrations"
MIGRATIONS_TABLE = "eval_schema_migrations"


class StoreError(LookupError):
    """An unknown run or point, an ambiguous id, or a point name already taken; the message
    names it."""


class RunLocked(StoreError):
    """Another live process is writing the run; the message names its pid and host."""


class RunLock(BaseModel):
    """The holder of a run's lock."""

    model_config = ConfigDict(extra="forbid")
    pid: int
    host: str
    started_at: dt.datetime


def holder_alive(lock: RunLock) -> bool:
    """Whether a lock's holder on this host still runs: its pid exists and that process
    started before the lock was taken (a later one merely reuses the number)."""
    try:
        created = float(psutil.Process(lock.pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return bool(psutil.pid_exists(lock.pid))
    return created <= lock.started_at.timestamp() + 1.0  # create_time is rounded


class StoreUnavailable(StoreError):
    """The run store's server is down or does not answer in time; the message names it."""


# Every call to the store's server is bounded: connecting, each statement (on the server and
# here, since a frozen server enforces nothing), and how long a run's end waits for the rows
# still queued. A write that fails is retried with back-off from RETRY_FIRST_S to RETRY_MAX_S.
STORE_TIMEOUT_S = 10.0
FLUSH_TIMEOUT_S = 10.0
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 8.0


def store_name(conninfo: str) -> str:
    """The store as a person finds it: its database and server, never a password."""
    try:
        params = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "the run store"
    where = str(params.get("host") or "localhost")
    if params.get("port"):
        where += f":{params['port']}"
    return f"the run store (database {params.get('dbname', '?')} on {where})"


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def _json(model: BaseModel, **kw: Any) -> Jsonb:
    """A record as JSON, with every secret-looking environment value redacted (as in the
    artifact and the report)."""
    return Jsonb(json.loads(redact(model.model_dump_json(**kw))))


WRITE_BATCH = 50
# How long the writer lets finished cases gather before it writes them: a batch costs the
# process ~2 ms of CPU whatever its size, and items finish in bursts (bench-compare: +20% CPU
# over two plain runs with a batch per case or two, under +15% with this).
WRITE_GATHER_S = 0.1


def _as_is(text: str) -> str:
    """JSON already written (and redacted) as text: psycopg sends it as it is."""
    return text


class RunStore:
    """Runs and their cases in PostgreSQL. Finished cases are queued and written by one writer
    task, in batches: a run at concurrency 200 never waits on the store's connections."""

    def __init__(self, db: Database, name: str = "the run store") -> None:
        self.db = db
        self.name = name
        self._queue: asyncio.Queue[tuple[str, CaseResult]] = asyncio.Queue()
        self._flushing = asyncio.Event()  # someone waits for the queue: write at once
        self._writer: asyncio.Task[None] | None = None
        self.write_errors: list[str] = []
        self.down: str | None = None  # why the store is failing, while it is
        self.unstored = 0  # finished cases queued or failing, not yet written

    @classmethod
    @asynccontextmanager
    async def open(cls, conninfo: str) -> AsyncIterator[RunStore]:
        name = store_name(conninfo)
        db = Database(conninfo, max_size=4, app_schema=False, timeout_s=STORE_TIMEOUT_S)
        try:
            async with asyncio.timeout(STORE_TIMEOUT_S * 2):
                async with await connect(conninfo, STORE_TIMEOUT_S) as conn:
                    await migrate(conn, MIGRATIONS, table=MIGRATIONS_TABLE)
                await db.open()
        except (psycopg.OperationalError, TimeoutError) as exc:
            await db.close()
            raise StoreUnavailable(
                f"{name} cannot be reached: {failure(exc, STORE_TIMEOUT_S)}") from None
        store = cls(db, name)
        try:
            yield store
        finally:
            await store.flush(0 if store.down else None)  # a run's end waited already
            if store._writer is not None:
                store._writer.cancel()
                await asyncio.gather(store._writer, return_exceptions=True)
            await db.close()

    # runs ---------------------------------------------------------------------------------

    async def start_run(self, record: RunRecord) -> None:
        assert record.run_id and record.plan and record.agent
        header = _json(record, exclude={"cases"})
        await self.db.execute(
            "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint,"
            " point, header) VALUES (%s, 'running', %s, %s, %s, %s, %s)",
            (record.run_id, record.agent.model, record.plan.fingerprint,
             record.agent.fingerprint, record.point, header))

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
            try:
                refused = await self._write(batch)
            except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError,
                    OSError) as exc:
                if self.down is None:
                    self.down = failure(exc, STORE_TIMEOUT_S)
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
                cases.append((*key, result.file, result.status, Jsonb(text, dumps=_as_is)))
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
    async def _held(cur: psycopg.AsyncCursor[Any], keys: list[tuple[str, str, int]]
                    ) -> dict[tuple[str, str, int], Any]:
        """The stored results of these cases (run, case, repetition), for those stored."""
        await cur.execute(
            "SELECT c.run_id, c.case_id, c.repetition, c.result FROM eval_cases c"
            " JOIN unnest(%s::text[], %s::text[], %s::int[]) AS k (run_id, case_id, repetition)"
            " USING (run_id, case_id, repetition)",
            ([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]))
        return {(r["run_id"], r["case_id"], r["repetition"]): r["result"]
                for r in await cur.fetchall()}

    async def finish_run(self, record: RunRecord) -> None:
        """The run's end: its queued cases written (FLUSH_TIMEOUT_S at most), then its status
        and totals; StoreUnavailable when the store does not answer."""
        if not await self.flush():
            raise StoreUnavailable(f"{self.name} is down ({self.down or 'no answer'}):"
                                   f" {self.unstored} finished case(s) are not in it")
        try:
            await self._finish(record)
        except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError) as exc:
            raise StoreUnavailable(f"{self.name} is down ({failure(exc, STORE_TIMEOUT_S)}):"
                                   " the run's end is not in it") from None

    async def _finish(self, record: RunRecord) -> None:
        await self.db.execute(
            "UPDATE eval_runs SET status = %s, ended_at = now(), totals = %s, header = %s,"
            " agent_fingerprint = %s WHERE id = %s",
            (record.status, Jsonb(record.totals.model_dump()), _json(record, exclude={"cases"}),
             record.agent.fingerprint if record.agent else "", record.run_id))

    async def import_run(self, record: RunRecord) -> tuple[int, int]:
        """Put a run from its artifact into the store (a run the store missed, in part or
        whole): its header and the cases the store lacks. A case the store holds already is
        kept as it is: the same result is skipped, and another result refuses the whole import
        before anything is written (a stored result is never rewritten). A complete stored
        run is final: only an artifact that adds nothing to it imports. Returns the cases
        written and those the store held already."""
        if not record.run_id or record.plan is None or record.agent is None:
            raise StoreError("the artifact holds no run to import (no run id, plan or agent)")
        stored = await self.db.fetchone("SELECT status FROM eval_runs WHERE id = %s",
                                        (record.run_id,))
        if stored is None:
            await self.start_run(record)  # the lock names a stored run
        await self.lock_run(record.run_id)  # RunLocked while a live process writes it
        try:
            async with self.db.connection() as conn, conn.cursor() as cur:
                held = await self._held(cur, [(record.run_id, r.id, r.repetition)
                                              for r in record.cases])
            fresh = [r for r in record.cases if (record.run_id, r.id, r.repetition) not in held]
            complete = stored is not None and stored["status"] == "complete"
            if complete and (record.status != "complete" or fresh):
                raise StoreError(f"run {record.run_id} is complete in the store, and a complete"
                                 " run is final: an artifact of it that is"
                                 f" {record.status}" + (f" with {len(fresh)} case(s) it lacks"
                                                        if fresh else "")
                                 + " would change it")
            differ = [f"{r.id}#{r.repetition}" for r in record.cases
                      if (record.run_id, r.id, r.repetition) in held and
                      held[(record.run_id, r.id, r.repetition)] != json.loads(
                          redact(r.model_dump_json()))]
            if differ:
                raise StoreError(f"run {record.run_id}: {len(differ)} case(s) of the artifact"
                                 f" differ from the stored ones ({', '.join(differ[:5])}"
                                 f"{', …' if len(differ) > 5 else ''}); a stored result is"
                                 " never rewritten, so nothing was imported")
            for start in range(0, len(fresh), WRITE_BATCH):
                refused = await self._write([(record.run_id, r)
                                             for r in fresh[start:start + WRITE_BATCH]])
                if refused:  # written meanwhile by someone else
                    raise StoreError("; ".join(refused))
            if not complete:
                await self._finish(record.model_copy(
                    update={"totals": Totals.of(record.cases)}))
        finally:
            await self.unlock_run(record.run_id)
        return len(fresh), len(record.cases) - len(fresh)

    async def cached_calls(self, run_ids: list[str], ttl_s: float) -> int:
        """How many model calls of these runs the call cache keeps unexpired."""
        row = await self.db.fetchone(
            "SELECT count(*) AS n FROM eval_call_cache WHERE run_id = ANY(%s) AND"
            " (pinned OR created_at > now() - make_interval(secs => %s))", (run_ids, ttl_s))
        return int(row["n"]) if row else 0

    async def resolve_run(self, ref: str) -> str:
        """A run id from an id or a unique prefix of one."""
        if "\x00" in ref:  # no id holds one, and PostgreSQL takes no NUL in a query
            raise StoreError(f"no stored run {ref!r} (python -m evals runs lists them)")
        rows = await self.db.fetch("SELECT id FROM eval_runs WHERE id LIKE %s ORDER BY id",
                                   (ref.replace("%", "").replace("_", r"\_") + "%",))
        if not rows:
            raise StoreError(f"no stored run {ref!r} (python -m evals runs lists them)")
        if len(rows) > 1:
            raise StoreError(f"run id {ref!r} is ambiguous: "
                             f"{', '.join(r['id'] for r in rows[:5])}")
        return str(rows[0]["id"])

    async def load_run(self, ref: str) -> RunRecord:
        run_id = await self.resolve_run(ref)
        head = await self.db.fetchone("SELECT header, status FROM eval_runs WHERE id = %s",
                                      (run_id,))
        assert head is not None
        rows = await self.db.fetch("SELECT result FROM eval_cases WHERE run_id = %s",
                                   (run_id,))
        record = read_record({**head["header"], "status": head["status"],
                              "cases": [r["result"] for r in rows]}, f"stored run {run_id}")
        order = {cid: i for i, cid in enumerate(record.settings.order)}
        record.cases.sort(key=lambda r: (order.get(r.id, len(order)), r.id, r.repetition))
        return record

    async def list_runs(self, limit: int = 30) -> list[RunSummary]:
        rows = await self.db.fetch(
            "SELECT id, started_at, status, model, plan_fingerprint, agent_fingerprint, point,"
            " totals, header->'settings'->>'rerun_of' AS rerun_of,"
            " (SELECT count(*) FROM eval_assessments a WHERE a.run_id = eval_runs.id)"
            " AS assessments FROM eval_runs ORDER BY started_at DESC LIMIT %s", (limit,))
        return [RunSummary.model_validate(r) for r in rows]

    async def last_complete_run(self, plan_fingerprint: str) -> str | None:
        """The id of the newest complete run under this plan, if any."""
        row = await self.db.fetchone(
            "SELECT id FROM eval_runs WHERE plan_fingerprint = %s AND status = 'complete'"
            " ORDER BY started_at DESC, id DESC LIMIT 1", (plan_fingerprint,))
        return str(row["id"]) if row else None

    async def file_counts(self, run_ids: list[str]) -> list[FileCount]:
        """Per run and case file: the cases that passed and those decided (PASS, FLAKY or
        FAIL), for files with any decided case."""
        rows = await self.db.fetch(
            "SELECT run_id, file, count(*) FILTER (WHERE status = 'PASS') AS passed,"
            " count(*) FILTER (WHERE status IN ('PASS', 'FLAKY', 'FAIL')) AS decided"
            " FROM eval_cases WHERE run_id = ANY(%s) GROUP BY run_id, file"
            " HAVING count(*) FILTER (WHERE status IN ('PASS', 'FLAKY', 'FAIL')) > 0",
            (run_ids,))
        return [FileCount.model_validate(r) for r in rows]

    # points -------------------------------------------------------------------------------

    async def save_point(self, point: Point) -> None:
        try:
            await self.db.execute(
                "INSERT INTO eval_points (name, plan_fingerprint, agent_fingerprint, point)"
                " VALUES (%s, %s, %s, %s)",
                (point.name, point.plan.fingerprint, point.agent.fingerprint, _json(point)))
        except psycopg.errors.UniqueViolation as exc:
            raise StoreError(f"a point named {point.name!r} exists already") from exc

    async def load_point(self, name: str) -> Point:
        row = await self.db.fetchone("SELECT point FROM eval_points WHERE name = %s", (name,))
        if row is None:
            names = [p.name for p in await self.list_points()]
            raise StoreError(f"no comparison point {name!r}; points: "
                             f"{', '.join(names) or 'none yet (python -m evals point save)'}")
        return Point.model_validate(upgrade_point(row["point"]))

    async def list_points(self) -> list[PointSummary]:
        rows = await self.db.fetch(
            "SELECT name, created_at, plan_fingerprint, agent_fingerprint,"
            " point->'agent'->>'model' AS model FROM eval_points ORDER BY created_at")
        return [PointSummary.model_validate(r) for r in rows]

    async def find_point(self, model: str, plan_fingerprint: str) -> Point | None:
        """The newest point for this model under this plan, if any."""
        row = await self.db.fetchone(
            "SELECT point FROM eval_points WHERE plan_fingerprint = %s"
            " AND point->'agent'->>'model' = %s ORDER BY created_at DESC LIMIT 1",
            (plan_fingerprint, model))
        return Point.model_validate(upgrade_point(row["point"])) if row else None

    # comparisons --------------------------------------------------------------------------

    async def save_comparison(self, point: str | None, baseline: str, current: str,
                              result: Comparison) -> str:
        cid = new_run_id()
        await self.db.execute(
            "INSERT INTO eval_comparisons (id, point, baseline_run, current_run, result)"
            " VALUES (%s, %s, %s, %s, %s)", (cid, point, baseline, current, _json(result)))
        return cid

    async def list_comparisons(self, limit: int = 30) -> list[ComparisonSummary]:
        rows = await self.db.fetch(
            "SELECT id, created_at, point, baseline_run, current_run, result->'counts' AS counts,"
            " result->>'verdict' AS verdict FROM eval_comparisons ORDER BY created_at DESC"
            " LIMIT %s", (limit,))
        return [ComparisonSummary.model_validate(r) for r in rows]

    async def load_comparison(self, cid: str) -> StoredComparison:
        """One stored comparison, with the runs it paired."""
        if "\x00" in cid:
            raise StoreError(f"no comparison {cid!r} (python -m evals compare)")
        row = await self.db.fetchone(
            "SELECT id, created_at, point, baseline_run, current_run, result"
            " FROM eval_comparisons WHERE id = %s", (cid,))
        if row is None:
            raise StoreError(f"no comparison {cid!r} (python -m evals compare)")
        return StoredComparison.model_validate(row)

    # progress -----------------------------------------------------------------------------

    async def launched(self, launch: str) -> list[LaunchedRun]:
        """The runs a workspace launch started, each with its finished cases by status and its
        cost so far (None while no attempt has a known price)."""
        rows = await self.db.fetch(
            "SELECT r.id, r.status, r.point, r.header->'settings'->>'version' AS version,"
            " jsonb_array_length(r.header->'settings'->'order') AS items,"
            " (r.header->'plan'->>'repeat')::int AS repeat,"
            " (SELECT coalesce(jsonb_object_agg(s.status, s.n), '{}') FROM (SELECT c.status,"
            "  count(*) AS n FROM eval_cases c WHERE c.run_id = r.id GROUP BY c.status) s)"
            "  AS counts,"
            " (SELECT sum(a.cost_usd) FROM eval_attempts a WHERE a.run_id = r.id) AS cost"
            " FROM eval_runs r WHERE r.header->'settings'->>'launch' = %s"
            " ORDER BY r.started_at, r.id", (launch,))
        return [LaunchedRun.model_validate(r) for r in rows]

    # locks --------------------------------------------------------------------------------

    async def lock_run(self, run_id: str, *, pid: int | None = None,
                       host: str | None = None) -> None:
        """Take the run's lock for this process (at most one writer of a stored run at a time).
        A lock whose holder on this host is dead is taken over; one held by a live process, or
        by any process on another host (which cannot be looked at from here), is refused with
        RunLocked naming it. The same process taking it again is a no-op."""
        pid, host = pid or os.getpid(), host or socket.gethostname()
        for _ in range(3):
            taken = await self.db.fetchone(
                "INSERT INTO eval_run_locks (run_id, pid, host) VALUES (%s, %s, %s)"
                " ON CONFLICT (run_id) DO NOTHING RETURNING run_id", (run_id, pid, host))
            if taken is not None:
                return
            holder = await self.run_lock(run_id)
            if holder is None:
                continue  # released in between: try again
            if holder.pid == pid and holder.host == host:
                return
            if holder.host == host and not holder_alive(holder):
                await self.db.execute(
                    "DELETE FROM eval_run_locks WHERE run_id = %s AND pid = %s AND host = %s"
                    " AND started_at = %s", (run_id, holder.pid, holder.host,
                                             holder.started_at))
                continue
            raise RunLocked(f"run {run_id} is being written by process {holder.pid} on"
                            f" {holder.host} (since {holder.started_at:%Y-%m-%d %H:%M:%S %Z});"
                            " wait for it to end, or stop it")
        raise RunLocked(f"run {run_id}: its lock changed hands three times while taking it")

    async def run_lock(self, run_id: str) -> RunLock | None:
        """Who holds the run's lock, if anyone."""
        row = await self.db.fetchone("SELECT pid, host, started_at FROM eval_run_locks"
                                     " WHERE run_id = %s", (run_id,))
        return RunLock.model_validate(row) if row else None

    async def unlock_run(self, run_id: str, *, pid: int | None = None,
                         host: str | None = None) -> None:
        """Release the run's lock if this process holds it (another holder's is left)."""
        await self.db.execute(
            "DELETE FROM eval_run_locks WHERE run_id = %s AND pid = %s AND host = %s",
            (run_id, pid or os.getpid(), host or socket.gethostname()))
