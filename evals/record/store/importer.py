"""A run put into the store from its artifact: a run the store missed, in part or whole."""

from __future__ import annotations

import json

from app.redact import redact
from evals.record.results import Totals
from evals.record.run import RunRecord
from evals.record.store.errors import StoreError
from evals.record.store.locks import Locks
from evals.record.store.runs import Runs
from evals.record.store.writer import WRITE_BATCH


class Importer(Runs, Locks):
    """The import of an artifact, under the run's lock."""

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
            complete = stored is not None and stored["status"] == "complete"
            fresh, held = await self.merge_cases(record, final=complete)
            if not complete:
                await self._finish(record.model_copy(
                    update={"totals": Totals.of(record.cases)}))
        finally:
            await self.unlock_run(record.run_id)
        return fresh, held

    async def merge_cases(self, record: RunRecord, *, final: bool = False) -> tuple[int, int]:
        """Write the cases of `record` (an artifact of a stored run) that the store lacks; the
        caller holds the run's lock. A case the store holds already is kept: the same result is
        skipped, another one refuses the whole merge before anything is written. `final`: the
        stored run is complete, and only an artifact that adds nothing to it is taken. Returns
        the cases written and those the store held already."""
        assert record.run_id
        async with self.db.connection() as conn, conn.cursor() as cur:
            held = await self._held(cur, [(record.run_id, r.id, r.repetition)
                                          for r in record.cases])
        fresh = [r for r in record.cases if (record.run_id, r.id, r.repetition) not in held]
        if final and (record.status != "complete" or fresh):
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
        return len(fresh), len(record.cases) - len(fresh)
