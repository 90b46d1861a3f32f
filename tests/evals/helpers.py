"""Small helpers the evals tests share."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from app.chat.reply import ModelReply
from app.db import Database
from evals.load.cases import Case
from evals.load.plan import harness_hash
from evals.load.selection import select_cases
from evals.record.fingerprint import Selection
from evals.record.online import OnlineVerdict
from evals.record.store import RunStore


def select(cases: list[Case], names: str) -> list[Case]:
    """The cases a comma list of files or ids names, as EVAL_CASES would."""
    return select_cases(cases, Selection.of(names))


def verdict(v, reason="because"):
    """A judge's reply: the structured verdict and its reason."""
    return ModelReply(content=json.dumps({"verdict": v, "reason": reason}))


@contextmanager
def cli_environment(monkeypatch, values: dict[str, str]) -> Iterator[None]:
    """The process environment a command runs under: no MODEL_ or EVAL_ variable but these
    values, the call cache off unless they ask for it (a test's scripted model answers the
    same request differently on purpose), a judge with no calibration record not calibrated
    unless they ask for it (its calls are not what the test counts, and its record would go
    to the project's judges.yaml), the hash embedder (no model download), and settings read
    afresh."""
    from app import embed
    from app.settings import get_settings
    from evals.settings import eval_settings

    for name in [k for k in os.environ if k.startswith(("MODEL_", "EVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in {"EVAL_CACHE": "off", "EVAL_AUTO_CALIBRATE": "0", **values}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(embed, "default_embedder", embed.HashEmbedder)
    get_settings.cache_clear()
    eval_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
        eval_settings.cache_clear()


@functools.cache
def _team_labels() -> dict[str, str]:
    """The makerspace set's label of each reply, read from the shipped files once a process (a
    calibration asks the fake judge once per labelled reply)."""
    from evals.calibration.sets import load_set
    from evals.load.cases import load_cases

    return {i.reply.reply: i.reply.label for i in load_set(load_cases())}


def team_verdict(messages: list[dict[str, str]], otherwise: str = "pass") -> str:
    """The verdict the makerspace set's labels give the reply a judge prompt grades: what a
    fake judge that agrees with the team answers (`otherwise` for a reply not in the set)."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    graded = user.partition("Reply to grade:\n<<<DATA\n")[2].partition("\nDATA>>>")[0]
    return _team_labels().get(graded, otherwise)


MONDAY = dt.datetime(2026, 11, 23, 10, tzinfo=dt.UTC)


CONVERSATION = "6f1c7a52-3b8e-4f43-9a7e-2d1b7c9e0a11"


def stored_online_verdicts(info):
    """Two weeks of online verdicts by two agents of one audience and page, the second failing
    `not_claimed_done` every time: 48 verdicts of today's harness on one consented
    conversation, and 2 that a trend leaves out (one of another harness, one of a
    conversation without consent)."""
    verdicts = []
    for n in range(24):
        later = n >= 12
        at = MONDAY + dt.timedelta(days=7 if later else 0, minutes=n)
        for kind in ("not_claimed_done", "citations_resolve"):
            said = "undecided" if kind == "citations_resolve" else "fail" if later else "pass"
            verdicts.append(OnlineVerdict(
                turn_id=n, conversation=CONVERSATION, turn_at=at, context="anonymous /",
                agent="b" * 12 if later else "a" * 12, model="m", kind=kind, verdict=said,
                harness=harness_hash()))
    left_out = [verdicts[0].model_copy(update={"harness": "older", "turn_id": 99}),
                verdicts[0].model_copy(update={"conversation": "no-consent", "turn_id": 98})]

    async def save():
        app_db = Database(info, max_size=1)  # the app's tables, as the app makes them
        await app_db.open()
        await app_db.close()
        async with await psycopg.AsyncConnection.connect(info) as owner:
            await owner.execute("INSERT INTO conversations (id, user_ref) VALUES (%s, 'u1')",
                                (CONVERSATION,))
            await owner.execute("INSERT INTO research_consent (user_ref, consent)"
                                " VALUES ('u1', true)")
            await owner.commit()
        async with RunStore.open(info) as store:
            assert await store.save_online(verdicts + left_out) == 50
    asyncio.run(save())
