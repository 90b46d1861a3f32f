"""Runs in the store: one started, its end (its queued cases written first), and runs read
back: by id or prefix, through the artifact's reader (older versions upgraded), listed, the
last complete one under a plan, counts per case file, a workspace launch's runs with their
progress, and the model calls the cache keeps for them."""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb

from evals.record.artifact import read_record
from evals.record.listings import FileCount, LaunchedRun, RunSummary
from evals.record.run import RunRecord
from evals.record.store.errors import StoreError, StoreUnavailable
from evals.record.store.rows import redacted_json
from evals.record.store.writer import CaseWriter


class Runs(CaseWriter):
    """A run's header and end; runs read back and listed."""

    async def start_run(self, record: RunRecord) -> None:
        assert record.run_id and record.plan and record.agent
        header = redacted_json(record, exclude={"cases"})
        await self.db.execute(
            "INSERT INTO eval_runs (id, status, model, plan_fingerprint, agent_fingerprint,"
            " point, header) VALUES (%s, 'running', %s, %s, %s, %s, %s)",
            (record.run_id, record.agent.model, record.plan.fingerprint,
             record.agent.fingerprint, record.point, header))

    async def finish_run(self, record: RunRecord) -> None:
        """The run's end: its queued cases written (FLUSH_TIMEOUT_S at most), then its status
        and totals; StoreUnavailable when the store does not answer."""
        if not await self.flush():
            raise StoreUnavailable(f"{self.name} is down ({self.down or 'no answer'}):"
                                   f" {self.unstored} finished case(s) are not in it")
        try:
            await self._finish(record)
        except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError) as exc:
            raise StoreUnavailable(f"{self.name} is down ({self.failure_of(exc)}):"
                                   " the run's end is not in it") from None

    async def _finish(self, record: RunRecord) -> None:
        await self.db.execute(
            "UPDATE eval_runs SET status = %s, ended_at = now(), totals = %s, header = %s,"
            " agent_fingerprint = %s WHERE id = %s",
            (record.status, Jsonb(record.totals.model_dump()),
             redacted_json(record, exclude={"cases"}),
             record.agent.fingerprint if record.agent else "", record.run_id))

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
        """The id of the newest complete run of the app under this plan, if any (a run sent to
        an endpoint composed nothing: no baseline for what the app is told)."""
        row = await self.db.fetchone(
            "SELECT id FROM eval_runs WHERE plan_fingerprint = %s AND status = 'complete'"
            " AND header->'models'->>'endpoint' IS NULL"
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

    async def cached_calls(self, run_ids: list[str], ttl_s: float) -> int:
        """How many model calls of these runs the call cache keeps unexpired."""
        row = await self.db.fetchone(
            "SELECT count(*) AS n FROM eval_call_cache WHERE run_id = ANY(%s) AND"
            " (pinned OR created_at > now() - make_interval(secs => %s))", (run_ids, ttl_s))
        return int(row["n"]) if row else 0
