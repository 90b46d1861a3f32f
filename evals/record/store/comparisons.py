"""Stored comparisons: what a pairing of two runs concluded, saved, listed and read back with
the runs it paired."""

from __future__ import annotations

from evals.record.comparison import Comparison
from evals.record.listings import ComparisonSummary, StoredComparison
from evals.record.store.connection import StoreBase
from evals.record.store.errors import StoreError
from evals.record.store.rows import new_run_id, redacted_json


class Comparisons(StoreBase):
    """Saving, listing and loading comparisons."""

    async def save_comparison(self, point: str | None, baseline: str, current: str,
                              result: Comparison) -> str:
        cid = new_run_id()
        await self.db.execute(
            "INSERT INTO eval_comparisons (id, point, baseline_run, current_run, result)"
            " VALUES (%s, %s, %s, %s, %s)",
            (cid, point, baseline, current, redacted_json(result)))
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
