"""Comparison points in the store (evals/record/store/points.py)."""

import pytest

from evals.execute.agent import agent_info, all_contexts
from evals.record.fingerprint import Point
from evals.record.store import StoreError
from tests.evals.execute.helpers import SETTINGS, cases, plan


async def test_points_are_saved_listed_and_unknown_names_refused(env, store, settings):
    cs = cases()
    agent = agent_info("scripted/fake", SETTINGS, await all_contexts(env, cs))
    p = Point(name="base", created="2026-11-30", plan=plan(cs), agent=agent)
    await store.save_point(p)
    assert (await store.load_point("base")) == p
    assert [r.name for r in await store.list_points()] == ["base"]
    with pytest.raises(StoreError, match="exists already"):
        await store.save_point(p)
    with pytest.raises(StoreError, match="no comparison point 'nope'; points: base"):
        await store.load_point("nope")
    with pytest.raises(StoreError, match="no stored run 'zzz'"):
        await store.load_run("zzz")
    assert await store.find_point("scripted/fake", p.plan.fingerprint) == p
