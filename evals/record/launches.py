"""Launches kept in the run store (table eval_launches): the exact request each run or
comparison started from the workspace or the MCP tools was launched with, and its idempotency
key, if it came with one.

A key makes a launch idempotent: the same key with the same request is answered with the launch
already made (never a second run), and the same key with another request is refused. The key
is claimed in the store (a unique column), so two processes that race on one key get one
launch between them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Literal

from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from evals.record.store import RunStore

# What an idempotency key may be: what a client generates (a UUID, a token), nothing else.
KEY_PATTERN = r"^[A-Za-z0-9._:-]{8,200}$"
_KEY = re.compile(KEY_PATTERN)


class LaunchConflict(ValueError):
    """An idempotency key used before with another request: nothing is started; the message
    says which launch has it and what differs."""


class LaunchRequest(BaseModel):
    """What a launch asked for, exactly as it was asked: a run (quick or full, a selection,
    repetitions, its kinds, a chat model) or a comparison with a saved point, optionally
    saving today's agent as a point first."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    mode: Literal["quick", "full"] = "quick"
    names: tuple[str, ...] = ()  # case and scenario files and ids (EVAL_CASES)
    groups: tuple[str, ...] = ()
    repeat: int = Field(default=1, ge=1)
    kinds: Literal["both", "cases", "scenarios"] = "both"
    compare_with: str | None = None  # a saved point
    save_point: str | None = None  # save today's agent as this point first, then compare
    model: str | None = None  # the chat model asked for (None: the launcher's own)

    def exact(self) -> LaunchRequest:
        """The request as stored and compared (a subclass's own type set aside)."""
        return LaunchRequest.model_validate(self.model_dump())


class StoredLaunch(BaseModel):
    """A launch as the store keeps it."""

    model_config = ConfigDict(extra="forbid")
    id: str
    key: str | None
    request: LaunchRequest
    created_at: dt.datetime


def valid_key(key: str) -> str:
    """The key, or ValueError saying what a key may be."""
    if not _KEY.match(key):
        raise ValueError("an idempotency key is 8 to 200 letters, digits, '.', '_', ':' or '-'")
    return key


def _differs(earlier: LaunchRequest, asked: LaunchRequest) -> str:
    fields = [f for f in LaunchRequest.model_fields if getattr(earlier, f) != getattr(asked, f)]
    return "; ".join(f"{f}: {getattr(earlier, f)!r} then, {getattr(asked, f)!r} now"
                     for f in fields)


def same_request(earlier: StoredLaunch, asked: LaunchRequest) -> StoredLaunch:
    """The earlier launch, when it was asked for exactly this; LaunchConflict otherwise."""
    if earlier.request != asked.exact():
        raise LaunchConflict(
            f"idempotency key {earlier.key!r} was used for another request (launch"
            f" {earlier.id}, {earlier.created_at:%Y-%m-%d %H:%M:%S %Z}): "
            f"{_differs(earlier.request, asked.exact())}; nothing was started")
    return earlier


async def claim_launch(store: RunStore, launch_id: str, key: str | None,
                       request: LaunchRequest) -> StoredLaunch:
    """Keep a new launch's exact request under its key (None: no key). Returns it; or, when
    the key was claimed first by another launch, that launch if it asked for exactly this
    (LaunchConflict if not)."""
    row = await store.db.fetchone(
        "INSERT INTO eval_launches (id, key, request) VALUES (%s, %s, %s)"
        " ON CONFLICT (key) DO NOTHING RETURNING id, key, request, created_at",
        (launch_id, None if key is None else valid_key(key),
         Jsonb(json.loads(request.exact().model_dump_json()))))
    if row is not None:
        return StoredLaunch.model_validate(row)
    assert key is not None  # without a key nothing conflicts
    earlier = await launch_by_key(store, key)
    assert earlier is not None  # launches are never removed
    return same_request(earlier, request)


async def launch_by_key(store: RunStore, key: str) -> StoredLaunch | None:
    """The launch made with this idempotency key, if any."""
    row = await store.db.fetchone(
        "SELECT id, key, request, created_at FROM eval_launches WHERE key = %s", (key,))
    return StoredLaunch.model_validate(row) if row else None


async def load_launch(store: RunStore, launch_id: str) -> StoredLaunch | None:
    """A launch by its id (the one its runs carry in settings.launch), with its request."""
    row = await store.db.fetchone(
        "SELECT id, key, request, created_at FROM eval_launches WHERE id = %s", (launch_id,))
    return StoredLaunch.model_validate(row) if row else None
