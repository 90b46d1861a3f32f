"""Catalogue search at a real lab's size: the latency of `search_catalog`'s search with 300
machines (the large lab's 71 and 229 more made from them: other brands and model numbers, the
same kinds of records), each labelled request searched in turn, after a warm-up round.

    python -m evals.bench.catalog [--machines 300] [--rounds 3]       (make bench-catalog)

Printed: p50 and p95 of a whole search, and of its parts measured apart (embedding the request
on its own; the two SQL statements with the embedding given), so where the time goes is seen.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence

from app.catalog import MachineRecord, UnitRecord, find, insert_machines
from app.db import Database
from app.embed import default_embedder
from app.settings import get_settings
from evals.calibration.retrieval import CATALOG_SET, load_requests
from evals.execute.env import eval_env
from evals.fixtures.lab_catalog import large_lab
from evals.settings import conninfo

BRANDS = ("Nordwerk", "Acutek", "Halden", "Brightline", "Kessler", "Orbis", "Vantor", "Maple & Co")


def more_machines(count: int) -> list[MachineRecord]:
    """`count` machines beyond the large lab, each a record of the lab's with another brand,
    model number and name."""
    base = large_lab()
    out = []
    for i in range(count):
        m = base[i % len(base)]
        brand = BRANDS[i % len(BRANDS)]
        model = f"{m.category.split()[0].upper()[:3]}-{100 + i}"
        name = f"{brand} {model}"
        out.append(MachineRecord(
            slug=f"bench-{i}-{m.slug}"[:60].rstrip("-"), name=name, brand=brand,
            category=m.category, summary=m.summary.replace(m.name, name), aliases=[model],
            specs=m.specs, location=m.location, induction_required=m.induction_required,
            units=[UnitRecord(label=f"{name} #1")]))
    return out


def _ms(values: Sequence[float]) -> str:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {statistics.median(values) * 1000:6.2f} ms · p95 {cuts[94] * 1000:6.2f} ms"


async def bench(machines: int, rounds: int) -> None:
    settings = get_settings()
    embedder = default_embedder()
    requests = [r.item.request for r in load_requests(CATALOG_SET)]
    async with eval_env(conninfo(settings), settings, embedder) as env:
        await env.use_catalog("large")
        extra = machines - len(large_lab())
        if extra > 0:
            await insert_machines(env.db, more_machines(extra))
        started = time.perf_counter()
        indexed = await find.index(env.db, embedder)
        print(f"{await _count(env.db)} machines; {indexed} records embedded in"
              f" {time.perf_counter() - started:.1f} s")
        for q in requests:  # warm-up: the embedder, the pool, prepared statements
            await find.search(env.db, embedder, q)
        whole, embedding, sql = [], [], []
        for _ in range(rounds):
            for q in requests:
                t0 = time.perf_counter()
                await find.search(env.db, embedder, q)
                t1 = time.perf_counter()
                [vector] = await asyncio.to_thread(embedder.embed, [q])
                t2 = time.perf_counter()
                await find.ranked(env.db, q, vector)
                t3 = time.perf_counter()
                whole.append(t1 - t0)
                embedding.append(t2 - t1)
                sql.append(t3 - t2)
    print(f"{len(requests)} requests × {rounds} rounds")
    print(f"  search, whole          {_ms(whole)}")
    print(f"  embedding the request  {_ms(embedding)}")
    print(f"  SQL (words, ranking)   {_ms(sql)}")


async def _count(db: Database) -> int:
    row = await db.fetchone("SELECT count(*) AS n FROM machines")
    return int(row["n"]) if row else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench.catalog")
    parser.add_argument("--machines", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    asyncio.run(bench(args.machines, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
