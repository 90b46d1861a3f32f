"""The call cache's table: expiry (never for a pinned model file), a corrupt or cut entry read
as a miss and written again, one entry per key when two runs write it at once, the size
bound, stats and clear."""

import asyncio

from evals.record import call_cache
from evals.record.call_cache import CallCache, Entry

DAY_S = 86400.0
REPLY = {"content": "Use the Trotec.", "tool_calls": [], "finish_reason": "stop",
         "usage": {"prompt_tokens": 3, "completion_tokens": 2, "cut": 0, "cached_tokens": 0,
                   "prefill_ms": 0, "generation_ms": 0}}


def entry(key="k1", pinned=False, run_id="r1", content="Use the Trotec.", model="openai/m"):
    return Entry(key, model, pinned, run_id, {**REPLY, "content": content})


async def written(cache, *entries):
    for e in entries:
        cache.put(e)
    assert await cache.flush()


def reader(store, ttl_s=DAY_S):
    """Another run's view of the cache (a run serves its own writes from memory)."""
    return CallCache(store.db, ttl_s=ttl_s)


async def age(store, key, days):
    await store.db.execute("UPDATE eval_call_cache SET created_at = now() - make_interval("
                           "days => %s) WHERE key = %s", (days, key))


async def test_a_hosted_entry_expires_and_a_pinned_one_never_does(store):
    await written(reader(store), entry("hosted"), entry("pinned", pinned=True))
    hit = await reader(store).get("hosted")
    assert hit is not None and hit.reply["content"] == "Use the Trotec." and hit.run_id == "r1"
    await age(store, "hosted", 8)
    await age(store, "pinned", 400)
    assert await reader(store, 7 * DAY_S).get("hosted") is None
    assert await reader(store, 7 * DAY_S).get("pinned") is not None
    assert (await call_cache.stats(store.db, 7 * DAY_S)).expired == 1
    # An expired one is written over.
    await written(reader(store, 7 * DAY_S), entry("hosted", content="Newer."))
    hit = await reader(store, 7 * DAY_S).get("hosted")
    assert hit is not None and hit.reply["content"] == "Newer."


async def test_a_corrupt_or_cut_entry_is_a_miss_said_once_then_written_again(store, capsys):
    await written(reader(store), entry("cut"), entry("garbled"))
    cache = reader(store)
    await store.db.execute("UPDATE eval_call_cache SET reply = left(reply, 20) WHERE key = 'cut'")
    await store.db.execute("UPDATE eval_call_cache SET reply = '[1, 2]', digest ="
                           " encode(sha256('[1, 2]'), 'hex') WHERE key = 'garbled'")
    assert await cache.get("cut") is None and await cache.get("cut") is None
    assert await cache.get("garbled") is None
    err = capsys.readouterr().err
    assert err.count("does not match its checksum") == 1
    assert "entry garbled is not a reply" not in err  # said once for the kind: corrupt
    await written(cache, entry("cut", content="Whole again."),
                  entry("garbled", content="A reply again."))
    hit = await reader(store).get("cut")
    assert hit is not None and hit.reply["content"] == "Whole again."
    hit = await reader(store).get("garbled")  # whole but not a reply: written over too
    assert hit is not None and hit.reply["content"] == "A reply again."


async def test_two_runs_writing_one_key_at_once_keep_one_entry(store):
    one, two = CallCache(store.db, ttl_s=DAY_S), CallCache(store.db, ttl_s=DAY_S)
    await asyncio.gather(written(one, entry("same", run_id="a", content="A")),
                         written(two, entry("same", run_id="b", content="B")))
    rows = await store.db.fetch("SELECT run_id, reply FROM eval_call_cache")
    assert len(rows) == 1
    hit = await reader(store).get("same")
    assert hit is not None and hit.reply["content"] in ("A", "B")
    assert {"a": "A", "b": "B"}[hit.run_id or ""] == hit.reply["content"]  # whole, not mixed


async def test_refresh_writes_over_and_reuse_keeps_the_first(store):
    await written(CallCache(store.db, ttl_s=DAY_S), entry("k", content="first"))
    await written(CallCache(store.db, ttl_s=DAY_S), entry("k", content="second"))
    assert (await CallCache(store.db, ttl_s=DAY_S).get("k")).reply["content"] == "first"
    await written(CallCache(store.db, ttl_s=DAY_S, refresh=True), entry("k", content="third"))
    assert (await CallCache(store.db, ttl_s=DAY_S).get("k")).reply["content"] == "third"


async def test_the_cache_is_trimmed_to_its_size_least_recently_used_first(store):
    cache = CallCache(store.db, ttl_s=DAY_S, max_bytes=1)
    await written(cache, entry("old"), entry("new"))
    await store.db.execute("UPDATE eval_call_cache SET used_at = now() - interval '1 hour'"
                           " WHERE key = 'old'")
    size = (await call_cache.stats(store.db, DAY_S)).bytes // 2
    assert await call_cache.trim(store.db, DAY_S, size) == 1
    assert [r["key"] for r in await store.db.fetch("SELECT key FROM eval_call_cache")] == [
        "new"]
    await cache.close()  # with max_bytes=1: nothing fits
    assert (await call_cache.stats(store.db, DAY_S)).entries == 0


async def test_a_hit_marks_the_entry_used(store):
    await written(reader(store), entry("k"))
    await store.db.execute("UPDATE eval_call_cache SET used_at = now() - interval '2 days'")
    cache = reader(store)
    assert await cache.get("k") is not None
    assert await cache.flush()
    row = await store.db.fetchone("SELECT used_at > now() - interval '1 minute' AS fresh"
                                  " FROM eval_call_cache")
    assert row["fresh"]


async def test_stats_and_clear_by_model_and_by_age(store):
    cache = CallCache(store.db, ttl_s=DAY_S)
    await written(cache, entry("a", model="openai/m"), entry("b", model="openai/m"),
                  entry("c", model="local", pinned=True))
    await age(store, "a", 3)
    s = await call_cache.stats(store.db, DAY_S)
    assert (s.entries, s.pinned, s.expired) == (3, 1, 1)
    assert [(m, n) for m, n, _ in s.by_model] == [("openai/m", 2), ("local", 1)]
    assert await call_cache.clear(store.db, expired_only=True, ttl_s=DAY_S) == 1
    assert await call_cache.clear(store.db, model="local") == 1
    assert await call_cache.clear(store.db) == 1
    assert (await call_cache.stats(store.db, DAY_S)).entries == 0


async def test_a_reply_utf8_cannot_encode_is_kept_escaped_and_loses_no_other_entry(store):
    # Half an emoji (a lone surrogate, which a provider's escaped JSON can carry) once failed
    # the whole batch it was written in.
    cache = reader(store)
    await written(cache, *(entry(f"k{i}") for i in range(5)),
                  entry("half", content="half an emoji \ud83d"))
    await cache.close()
    assert cache.warnings == []
    assert (await call_cache.stats(store.db, DAY_S)).entries == 6
    hit = await reader(store).get("half")
    assert hit is not None and hit.reply["content"] == "half an emoji \ud83d"


async def test_an_entry_that_cannot_be_written_is_left_out_alone(store):
    cache = reader(store)
    await written(cache, entry("fine"), Entry("odd", "openai/m", False, "r1",
                                              {**REPLY, "content": {1, 2}}))  # not JSON
    await cache.close()
    assert [w.split(" (")[0] for w in cache.warnings] == [
        "call cache: entry odd cannot be written"]
    assert await reader(store).get("fine") is not None and await reader(store).get("odd") is None


async def test_two_runs_whose_batches_deadlock_keep_every_entry(store):
    # A reuse run writing expired keys over while marking its hits used, beside a refresh run
    # writing the same keys: their statements take row locks in two orders, and PostgreSQL
    # ends one transaction as a deadlock; the writer writes that batch again.
    keys = [f"k{i:02}" for i in range(50)]
    for round_ in range(3):
        await store.db.execute("DELETE FROM eval_call_cache")
        await written(reader(store), *(entry(k) for k in keys))
        await store.db.execute("UPDATE eval_call_cache SET created_at = now() - interval"
                               " '30 days' WHERE key >= 'k25'")
        reuse = CallCache(store.db, ttl_s=7 * DAY_S)
        refresh = CallCache(store.db, ttl_s=7 * DAY_S, refresh=True)
        for k in keys[25:]:
            reuse.put(entry(k, content=f"reuse {round_}"))
        for k in keys[:25]:
            reuse._enqueue(k)  # a hit marked used
        for k in keys:
            refresh.put(entry(k, content=f"refresh {round_}"))
        await asyncio.gather(reuse.close(), refresh.close())
        assert reuse.warnings == refresh.warnings == [], round_
        assert (await call_cache.stats(store.db, DAY_S)).entries == 50
