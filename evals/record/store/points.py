"""Comparison points in the store: saved under a unique name, loaded (older versions
upgraded), listed, and the newest for a model under a plan."""

from __future__ import annotations

import psycopg

from evals.record.fingerprint import Point
from evals.record.listings import PointSummary
from evals.record.store.connection import StoreBase
from evals.record.store.errors import StoreError
from evals.record.store.rows import redacted_json
from evals.record.upgrade import upgrade_point


class Points(StoreBase):
    """Saving, loading, listing and finding points."""

    async def save_point(self, point: Point) -> None:
        try:
            await self.db.execute(
                "INSERT INTO eval_points (name, plan_fingerprint, agent_fingerprint, point)"
                " VALUES (%s, %s, %s, %s)",
                (point.name, point.plan.fingerprint, point.agent.fingerprint,
                 redacted_json(point)))
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
