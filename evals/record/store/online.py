"""Online verdicts in the store: written once (a verdict is final, and a turn is checked again
only under another harness), the turns already checked, and the verdicts since a date."""

from __future__ import annotations

import datetime as dt

from evals.record.online import OnlineVerdict
from evals.record.store.connection import StoreBase

_COLUMNS = "turn_id, conversation, turn_at, agent, context, model, kind, verdict, why, harness"


class Online(StoreBase):
    """Saving and reading online verdicts."""

    async def save_online(self, verdicts: list[OnlineVerdict]) -> int:
        """Store these verdicts in one transaction; a verdict already stored for its turn,
        check and harness is kept as it was. Returns how many were new."""
        added = 0
        async with self.db.transaction() as conn:
            for v in verdicts:
                cur = await conn.execute(
                    f"INSERT INTO eval_online_verdicts ({_COLUMNS}) VALUES"
                    " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (v.turn_id, v.conversation, v.turn_at, v.agent, v.context, v.model,
                     v.kind, v.verdict, v.why, v.harness))
                added += cur.rowcount
        return added

    async def checked_turns(self, harness: str) -> set[tuple[str, int]]:
        """The (conversation, turn id) already checked under this harness."""
        rows = await self.db.fetch(
            "SELECT DISTINCT conversation, turn_id FROM eval_online_verdicts"
            " WHERE harness = %s", (harness,))
        return {(r["conversation"], r["turn_id"]) for r in rows}

    async def online_verdicts(self, since: dt.datetime | None = None,
                              harness: str | None = None) -> list[OnlineVerdict]:
        """The stored verdicts of turns answered since `since` (all: None), oldest first:
        under one harness when named (a trend never mixes two: a stricter check would read as
        a change in traffic), else each turn's newest."""
        rows = await self.db.fetch(
            f"SELECT DISTINCT ON (conversation, turn_id, kind) {_COLUMNS}"
            " FROM eval_online_verdicts WHERE (%s::timestamptz IS NULL OR turn_at >= %s)"
            " AND (%s::text IS NULL OR harness = %s)"
            " ORDER BY conversation, turn_id, kind, checked_at DESC",
            (since, since, harness, harness))
        verdicts = [OnlineVerdict.model_validate(r) for r in rows]
        return sorted(verdicts, key=lambda v: (v.turn_at, v.turn_id, v.kind))
