"""Online evaluation (`python -m evals online`): the checks that need no case author, on the
app's recorded turns whose person consented, stored in the run store (the turn's reference and
the verdict, never its text); and their trend per check, per week and per deployed agent,
flagged where it moved beyond the suite's run-to-run noise (evals/report/online.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import httpx

from app.db import Database
from app.db.migrate import MigrationError
from app.manuals.blobs import BlobStore
from app.settings import Settings, get_settings
from evals.api.errors import ApiError
from evals.api.setup import app_settings, run_closing
from evals.load.plan import harness_hash
from evals.record.online import OnlineVerdict, TrendRow
from evals.record.store import RunStore, StoreError
from evals.report.online import (
    check_turn,
    consented_conversations,
    consented_refs,
    consented_turns,
    evidence_of,
    manual_titles,
    unreadable_turn,
)
from evals.report.online_trend import flagged_now, suite_noise, trend
from evals.settings import conninfo

# Runs read for the suite's run-to-run noise: the newest, complete ones.
NOISE_RUNS = 60


@dataclass(frozen=True)
class Sampled:
    """One pass of the sampler: the consented turns it saw, those it checked now, those
    checked before under this harness (left alone), the verdicts it made, and how many of
    them the store did not hold yet."""

    consented: int
    checked: int
    already: int
    verdicts: list[OnlineVerdict]
    stored: int
    unreadable: int = 0  # turns whose stored shape the checks could not read


@dataclass(frozen=True)
class Trend:
    """The stored verdicts' trend, by week and by agent (within an audience and page), the
    noise it was read against, the verdicts it read (today's harness's, of conversations
    whose person still consents), and those it left out for either reason."""

    by_week: list[TrendRow]
    by_agent: list[TrendRow]
    noise: dict[str, float]
    verdicts: int
    other_harness: int = 0
    withdrawn: int = 0

    @property
    def flagged(self) -> list[TrendRow]:
        """Every flagged group, old ones included (the tables show them)."""
        return [r for r in [*self.by_week, *self.by_agent] if r.flagged]

    @property
    def flagged_now(self) -> list[TrendRow]:
        """The flags that are news: a stream's newest group flagged."""
        return [*flagged_now(self.by_week), *flagged_now(self.by_agent)]


def sample(limit: int | None = None, since: dt.datetime | None = None) -> Sampled:
    """Check the consented turns answered since `since` that this harness has not checked
    yet, newest first, at most `limit` of them, and store their verdicts."""
    try:
        return run_closing(_sample(app_settings(), limit, since))
    except (StoreError, MigrationError) as exc:
        raise ApiError(str(exc)) from exc


def online_trend(since: dt.datetime | None = None) -> Trend:
    """The trend of the stored verdicts of turns answered since `since`."""
    try:
        return run_closing(read_trend(conninfo(app_settings()), since))
    except (StoreError, MigrationError) as exc:
        raise ApiError(str(exc)) from exc


async def _sample(settings: Settings, limit: int | None, since: dt.datetime | None
                  ) -> Sampled:
    harness = harness_hash()
    # The app's own manual store, where its answers' citations point (the eval's settings
    # blank it: a run checks against the fixtures, this against what visitors were told).
    live = get_settings()
    blobs = BlobStore(live.blob_root(), live.blob_base())
    db = Database(conninfo(settings), max_size=2)
    await db.open()
    try:
        refs = await consented_refs(db, since)
        titles = await manual_titles(db)
        async with RunStore.open(conninfo(settings)) as store:
            done = await store.checked_turns(harness)
            todo = [i for c, i in reversed(refs) if (c, i) not in done]
            picked = await consented_turns(db, todo[:limit] if limit is not None else todo)
            verdicts, unreadable = [], 0
            async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
                for t in picked:
                    try:
                        evidence = await evidence_of(t, db, blobs, client)
                        verdicts += await check_turn(t, harness, evidence, titles)
                    except Exception as exc:  # a stored turn's shape, never the pass's end
                        verdicts += unreadable_turn(t, harness, exc)
                        unreadable += 1
            stored = await store.save_online(verdicts)
    finally:
        await db.close()
    return Sampled(consented=len(refs), checked=len(picked), already=len(refs) - len(todo),
                   verdicts=verdicts, stored=stored, unreadable=unreadable)


async def read_trend(info: str, since: dt.datetime | None = None) -> Trend:
    """The trend on the database at `info` (the workspace reads it from a running loop)."""
    harness = harness_hash()
    db = Database(info, max_size=2)
    await db.open()
    try:
        consenting = await consented_conversations(db)
    finally:
        await db.close()
    async with RunStore.open(info) as store:
        everything = await store.online_verdicts(since)
        today = await store.online_verdicts(since, harness)
        # The suite's noise only when there is a trend to read it against.
        rows = [r for r in await store.list_runs(NOISE_RUNS) if r.status == "complete"] \
            if today else []
        runs = [await store.load_run(r.id) for r in rows]
    verdicts = [v for v in today if v.conversation in consenting]
    noise = suite_noise(runs)
    return Trend(trend(verdicts, noise, "week"), trend(verdicts, noise, "agent"), noise,
                 len(verdicts), other_harness=len(everything) - len(today),
                 withdrawn=len(today) - len(verdicts))
