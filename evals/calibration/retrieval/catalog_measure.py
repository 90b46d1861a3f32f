"""Catalogue search measured on labelled requests, apart from any chat model: every request
searched, as the assistant's `search_catalog` tool searches, in a fresh eval database holding
the large lab (71 machines).

* **Requests with right machines:** recall@1 and recall@3 (a right machine within the first
  1 or 3 results), MRR over the first DEPTH, and, for requests with several right machines,
  how many of the first three are right (coverage@3: right ones / min(3, how many are right)).
* **"None"**: precision (of the requests search found nothing for, how many the lab really
  has nothing for) and recall (of the requests the lab has nothing for, how many search found
  nothing for). Returning machines for those is the false answer the assistant must not give.
* **General questions** ("what do you have?"): whether search answered with the catalogue's
  overview.
* Latency of each search, p50 and p95 (the benchmark measures it at 300 machines).
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from app import catalog
from app.db import Database
from app.embed import Embedder
from app.settings import Settings
from evals.calibration.retrieval.catalog_set import Expect, LabelledRequest, RequestKind
from evals.calibration.retrieval.metrics import first_hit, mean_reciprocal_rank, recall_at
from evals.execute.env import eval_env
from evals.settings import conninfo

DEPTH = 10


class Searched(BaseModel):
    """One request as search answered it."""

    id: str
    where: str
    kind: RequestKind
    request: str
    expect: Expect
    expected: list[str]
    answer: Expect  # what search did: ranked machines, said none match, or gave the overview
    found: list[str]  # the slugs ranked, best first
    rank: int | None  # of the first right machine (requests with right machines)
    ms: float


class KindFigures(BaseModel):
    kind: RequestKind
    n: int
    recall_at_3: float | None


class CatalogReport(BaseModel):
    what: Literal["catalog"] = "catalog"
    set: str
    embedder: str
    machines: int
    depth: int
    n: int  # requests with right machines
    recall_at_1: float | None
    recall_at_3: float | None
    mrr: float | None
    coverage_at_3: float | None  # requests with several right machines
    none_said: int  # requests search found nothing for
    none_right: int  # of those, requests the lab has nothing for
    none_expected: int
    overview_given: int
    overview_expected: int
    p50_ms: float
    p95_ms: float
    kinds: list[KindFigures]
    outcomes: list[Searched]

    @property
    def none_precision(self) -> float | None:
        return self.none_right / self.none_said if self.none_said else None

    @property
    def none_recall(self) -> float | None:
        return self.none_right / self.none_expected if self.none_expected else None


async def search_one(db: Database, embedder: Embedder, text: str) -> tuple[Expect, list[str]]:
    """What catalogue search does with a request: its answer and the slugs it ranked."""
    found = await catalog.search(db, embedder, text, limit=DEPTH)
    return found.answer, found.slugs


async def search_all(db: Database, embedder: Embedder,
                     labelled: Sequence[LabelledRequest]) -> list[Searched]:
    out = []
    for r in labelled:
        started = time.perf_counter()
        answer, found = await search_one(db, embedder, r.item.request)
        ms = (time.perf_counter() - started) * 1000
        rank = first_hit(found, r.expected) if r.expect == "machines" else None
        out.append(Searched(id=r.item.id, where=r.where, kind=r.item.kind,
                            request=r.item.request, expect=r.expect, expected=list(r.expected),
                            answer=answer, found=found, rank=rank, ms=ms))
    return out


def _coverage(o: Searched) -> float:
    right = set(o.expected)
    return len(right & set(o.found[:3])) / min(3, len(right))


def _quantile(values: Sequence[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def report(outcomes: Sequence[Searched], *, set_name: str, embedder: str,
           machines: int) -> CatalogReport:
    """The figures of a searched set (pure)."""
    matched = [o for o in outcomes if o.expect == "machines"]
    ranks = [o.rank for o in matched]
    several = [o for o in matched if len(o.expected) > 1]
    said_none = [o for o in outcomes if o.answer == "none"]
    kinds = Counter(o.kind for o in matched)
    ms = [o.ms for o in outcomes]
    return CatalogReport(
        set=set_name, embedder=embedder, machines=machines, depth=DEPTH, n=len(matched),
        recall_at_1=recall_at(ranks, 1), recall_at_3=recall_at(ranks, 3),
        mrr=mean_reciprocal_rank(ranks),
        coverage_at_3=statistics.fmean(_coverage(o) for o in several) if several else None,
        none_said=len(said_none), none_right=sum(o.expect == "none" for o in said_none),
        none_expected=sum(o.expect == "none" for o in outcomes),
        overview_given=sum(o.expect == "overview" and o.answer == "overview"
                           for o in outcomes),
        overview_expected=sum(o.expect == "overview" for o in outcomes),
        p50_ms=_quantile(ms, 0.5), p95_ms=_quantile(ms, 0.95),
        kinds=[KindFigures(kind=k, n=n, recall_at_3=recall_at(
            [o.rank for o in matched if o.kind == k], 3)) for k, n in sorted(kinds.items())],
        outcomes=list(outcomes))


async def measure_catalog(settings: Settings, embedder: Embedder,
                          labelled: Sequence[LabelledRequest], *,
                          set_name: str) -> CatalogReport:
    """Search every request in a fresh eval database holding the large lab, then drop it."""
    async with eval_env(conninfo(settings), settings, embedder) as env:
        await env.use_catalog("large")
        count = await env.db.fetchone("SELECT count(*) AS n FROM machines")
        assert count is not None
        outcomes = await search_all(env.db, embedder, labelled)
    return report(outcomes, set_name=set_name, embedder=embedder.name, machines=count["n"])
