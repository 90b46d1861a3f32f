"""Launches in the run store: the exact request kept under its idempotency key, the same key
and request answered with the first launch, another request under it refused, a key that is
not one refused, and a kept launch final (direct SQL cannot change it)."""

import psycopg
import pytest

from evals.record.launches import (
    LaunchConflict,
    LaunchRequest,
    claim_launch,
    launch_by_key,
    load_launch,
)

KEY = "3f1c2a9e-7b7d-4c1e-9a53-0b2f6d1e4c88"


async def test_the_same_key_and_request_is_the_first_launch(store):
    asked = LaunchRequest(names=("no-glowforge",), repeat=2, model="openai/gpt-4o")
    first = await claim_launch(store, "launch00001", KEY, asked)
    assert first.id == "launch00001" and first.request == asked
    again = await claim_launch(store, "launch00002", KEY, asked)
    assert again == first  # the second id is never stored
    assert await load_launch(store, "launch00002") is None
    assert await launch_by_key(store, KEY) == first
    # a launch with no key keeps its request too, and never conflicts
    plain = await claim_launch(store, "launch00003", None, asked)
    assert plain.key is None and (await load_launch(store, "launch00003")) == plain
    assert (await claim_launch(store, "launch00004", None, asked)).id == "launch00004"


async def test_another_request_under_a_key_and_a_key_that_is_not_one_are_refused(store):
    await claim_launch(store, "launch00001", KEY, LaunchRequest(compare_with="base"))
    with pytest.raises(LaunchConflict, match=f"idempotency key '{KEY}' was used for another"
                                             " request .launch launch00001, .*compare_with:"
                                             " 'base' then, 'other' now; nothing was started"):
        await claim_launch(store, "launch00002", KEY, LaunchRequest(compare_with="other"))
    with pytest.raises(ValueError, match="an idempotency key is 8 to 200 letters"):
        await claim_launch(store, "launch00003", "no spaces allowed", LaunchRequest())
    assert await load_launch(store, "launch00002") is None


async def test_a_kept_launch_cannot_be_changed_by_hand(store):
    await claim_launch(store, "launch00001", KEY, LaunchRequest())
    for statement, refusal in [
            ("UPDATE eval_launches SET request = '{\"repeat\": 3}'", "UPDATE on eval_launches"),
            ("UPDATE eval_launches SET key = 'another-key-1'", "UPDATE on eval_launches"),
            ("DELETE FROM eval_launches", "DELETE on eval_launches"),
            ("TRUNCATE eval_launches", "TRUNCATE on eval_launches")]:
        async with await psycopg.AsyncConnection.connect(store.db.conninfo,
                                                         autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation,
                               match=f"evidence kept: {refusal} refused: a launch and its"
                                     " request are final"):
                await conn.execute(statement)
