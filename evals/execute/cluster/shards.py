"""A distributed run's unit of work: a shard of items that share a context (audience, page and
catalogue), so a worker composes that context once and a local model keeps its prompt prefix
warm. A large context is cut into several shards, so every worker has work."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evals.fixtures.lab_catalog import CATALOGS, Catalog
from evals.load.items import EvalItem

# Shards per worker the run aims at: more than one, so a worker that finishes early takes
# another instead of waiting for the slowest.
SHARDS_PER_WORKER = 4


@dataclass(frozen=True)
class Shard:
    """Items of one context, each to run `repeat` times for every variant (less what is done
    already, named in `done`)."""

    key: str  # the context's key
    catalog: Catalog
    items: tuple[EvalItem, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(i.id for i in self.items)


def shards_of(items: Sequence[EvalItem], workers: int,
              done: Mapping[tuple[str, str, int], str] | None = None,
              variants: Sequence[str] = (), repeat: int = 1) -> dict[Catalog, list[Shard]]:
    """The items' shards by catalogue phase (in run order), each of one context and at most
    about total / (workers × SHARDS_PER_WORKER) items, the largest first. An item whose every
    repetition of every variant is `done` is left out."""
    done = done or {}
    todo = [i for i in items
            if not variants or any((v, i.id, r) not in done
                                   for v in variants for r in range(1, repeat + 1))]
    size = max(1, math.ceil(len(todo) / max(1, workers * SHARDS_PER_WORKER)))
    out: dict[Catalog, list[Shard]] = {}
    for catalog in CATALOGS:
        by_context: dict[str, list[EvalItem]] = {}
        for item in todo:
            if item.context.catalog == catalog:
                by_context.setdefault(item.context.key, []).append(item)
        shards = [Shard(key, catalog, tuple(group[n:n + size]))
                  for key, group in by_context.items() for n in range(0, len(group), size)]
        if shards:
            out[catalog] = sorted(shards, key=lambda s: -len(s.items))
    return out
