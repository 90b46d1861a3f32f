"""The run store: runs, cases, attempts and checks, comparison points and comparisons in
PostgreSQL (the embedded server by default, DATABASE_URL otherwise), with forward migrations
of its own (evals/record/store_migrations/, recorded in eval_schema_migrations).

A case is written the moment it finishes, so an interrupted run keeps what it did, and is never
written again: stored evidence is final (0005_evidence_kept.sql: triggers refuse to change or
remove a stored case, point, comparison or complete run, by the harness or by hand).
Reassessments (assessment.py) and launches (launches.py) are stored beside runs. Runs are read
back through the artifact's reader (older versions upgraded); listings are typed.

One module a concept, each a part of `RunStore`: the database, its migrations and timeouts
(`connection.py`), the store opened and its write-behind queue of finished cases
(`writer.py`), runs (`runs.py`), an artifact's import (`importer.py`), points (`points.py`),
comparisons (`comparisons.py`), online verdicts (`online.py`), the run lock (`locks.py`); how
records become rows (`rows.py`) and what the store refuses with (`errors.py`).
"""

from __future__ import annotations

from evals.record.store.comparisons import Comparisons
from evals.record.store.connection import MIGRATIONS, MIGRATIONS_TABLE, store_name
from evals.record.store.errors import RunLocked, StoreError, StoreUnavailable
from evals.record.store.importer import Importer
from evals.record.store.locks import RunLock, holder_alive
from evals.record.store.online import Online
from evals.record.store.points import Points
from evals.record.store.rows import new_run_id

__all__ = ["MIGRATIONS", "MIGRATIONS_TABLE", "RunLock", "RunLocked", "RunStore", "StoreError",
           "StoreUnavailable", "holder_alive", "new_run_id", "store_name"]


class RunStore(Importer, Points, Comparisons, Online):
    """Runs and their cases in PostgreSQL, opened with `RunStore.open(conninfo)`. Finished
    cases are queued and written by one writer task, in batches: a run at concurrency 200
    never waits on the store's connections."""
