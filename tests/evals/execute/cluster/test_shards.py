"""Shards: items of one context together, a large context cut so every worker has work, phase
by phase in run order, and what is done left out."""

from evals.execute.cluster import shards_of
from evals.execute.cluster.shards import SHARDS_PER_WORKER
from tests.evals.execute.helpers import cases


def test_a_shard_holds_items_of_one_context_and_every_item_is_in_one():
    items = cases("catalog-lookup,honest-absence,staff-maintenance,photo-identify")
    phases = shards_of(items, workers=2)
    assert list(phases) == ["demo", "lab", "large"]  # the run's phase order
    seen = []
    for catalog, shards in phases.items():
        for shard in shards:
            assert {i.context.key for i in shard.items} == {shard.key}
            assert {i.context.catalog for i in shard.items} == {catalog}
            seen += shard.ids
    assert sorted(seen) == sorted(i.id for i in items)


def test_a_large_context_is_cut_so_every_worker_has_work():
    items = cases("catalog-lookup,honest-absence")
    demo = [i for i in items if i.context.catalog == "demo"]
    assert len({i.context.key for i in demo}) <= 2  # few contexts, many items
    shards = shards_of(demo, workers=2)["demo"]
    size = -(-len(demo) // (2 * SHARDS_PER_WORKER))
    assert len(shards) >= 2 and all(len(s.items) <= size for s in shards)
    assert [len(s.items) for s in shards] == sorted((len(s.items) for s in shards), reverse=True)


def test_what_is_done_for_every_variant_and_repetition_is_left_out():
    items = cases("no-glowforge,no-cnc-router")
    done = {("a", "no-glowforge", 1): "PASS", ("b", "no-glowforge", 1): "PASS",
            ("a", "no-cnc-router", 1): "PASS"}
    phases = shards_of(items, 1, done, variants=["a", "b"], repeat=1)
    assert [i for s in phases["demo"] for i in s.ids] == ["no-cnc-router"]
    assert shards_of(items, 1, done | {("b", "no-cnc-router", 1): "FAIL"}, ["a", "b"]) == {}
