"""Benchmark: ingest synthetic manuals up to N passages, then time passage search.

    python -m app.manuals.bench [--passages 50000] [--queries 200] [--keep]

Runs on the embedded PostgreSQL in a scratch database (dropped afterwards), with the real
embedder. With --keep the corpus stays in the database `manuals_bench`, and the next --keep
run searches it again without ingesting (ingestion takes about half an hour at 50,000
passages). Prints ingestion throughput (pages/s, passages/s) and search latency p50/p95, both
end to end (embedding the question + SQL) and SQL alone (a pre-computed question vector).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import psycopg
from fpdf import FPDF
from psycopg.conninfo import make_conninfo

from app.db import Database, resolve_conninfo, scratch_database
from app.embed import default_embedder
from app.manuals.blobs import BlobStore
from app.manuals.demo import DEMO_MANUALS, FIXTURE_DIR
from app.manuals.library import ManualLibrary
from app.manuals.pdf import page_texts
from app.seed import seed_demo
from app.settings import get_settings

WORDS = ("resin tank build platform layer height support laser lens focus exhaust acrylic "
         "plywood engrave cut cure wash alcohol gloves glasses filament nozzle bed level "
         "calibrate spindle router collet feed speed clamp vise drill bit chuck guard").split()
# A page drawing on a few dozen words would make every full-text query match every passage;
# the words of the fixture manuals give a realistic, wider vocabulary of real English.
VOCABULARY = sorted({
    w.lower()
    for name, _, _ in DEMO_MANUALS
    for text in page_texts((FIXTURE_DIR / name).read_bytes(), name)
    for w in re.findall(r"[A-Za-z]{3,}", text)
} | set(WORDS))
PAGES_PER_PDF = 250
KEPT_DATABASE = "manuals_bench"
INGEST_CONCURRENCY = 2  # one per core


def _page(rng: random.Random) -> str:
    sentences = []
    for _ in range(12):
        words = rng.choices(VOCABULARY, k=rng.randint(8, 14))
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def _pdf(rng: random.Random, pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for _ in range(pages):
        pdf.add_page()
        pdf.multi_cell(0, 5, _page(rng), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


async def _manual_count(db: Database) -> int:
    row = await db.fetchone("SELECT count(*) AS n FROM manuals")
    return row["n"] if row else 0


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


@asynccontextmanager
async def _database(server: str, keep: bool) -> AsyncIterator[str]:
    """A scratch database, or with keep the named one (created on first use, never dropped)."""
    if not keep:
        async with scratch_database(server, prefix="bench") as info:
            yield info
        return
    async with await psycopg.AsyncConnection.connect(server, autocommit=True) as admin:
        exists = await (await admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (KEPT_DATABASE,))).fetchone()
        if not exists:
            await admin.execute(f'CREATE DATABASE "{KEPT_DATABASE}"')
    yield make_conninfo(server, dbname=KEPT_DATABASE)


async def run(passages_target: int, queries: int, keep: bool) -> None:
    settings = get_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    server = resolve_conninfo(url, settings.data_dir)
    rng = random.Random(7)
    embedder = default_embedder()
    async with _database(server, keep) as info:
        db = Database(info, max_size=4)
        await db.open()
        row = await db.fetchone("SELECT count(*) AS n FROM machines")
        if row is None or row["n"] == 0:
            await seed_demo(db)
        with tempfile.TemporaryDirectory() as tmp:
            library = ManualLibrary(db, BlobStore(Path(tmp), "http://127.0.0.1:9/blobs"),
                                    embedder)
            row = await db.fetchone("SELECT count(*) AS n FROM passages")
            total_passages = row["n"] if row else 0
            total_pages = new_passages = 0
            ingest_s = 0.0
            n = await _manual_count(db)
            if total_passages >= passages_target:
                print(f"searching the kept corpus of {total_passages} passages"
                      f" (database {KEPT_DATABASE}); no ingestion this run")
            while total_passages < passages_target:
                batch = [_pdf(rng, PAGES_PER_PDF) for _ in range(INGEST_CONCURRENCY)]
                started = time.perf_counter()
                results = await asyncio.gather(*(
                    library.ingest(data, name=f"synthetic-{n + i}.pdf", slug="form-4",
                                   title=f"Synthetic manual {n + i}")
                    for i, data in enumerate(batch)
                ))
                ingest_s += time.perf_counter() - started
                n += len(batch)
                total_pages += sum(r.pages for r in results)
                new_passages += sum(r.passages for r in results)
                total_passages += sum(r.passages for r in results)
                print(f"  ingested {total_passages} passages ({total_pages} pages)", flush=True)
            if ingest_s:
                print(f"ingestion: {total_pages} pages, {new_passages} passages in"
                      f" {ingest_s:.1f} s = {total_pages / ingest_s:.1f} pages/s,"
                      f" {new_passages / ingest_s:.1f} passages/s"
                      " (pypdf + chunking + embedding + inserts)")
            # Questions about one passage each: a few of its words, as a person would ask.
            pages = [_page(rng) for _ in range(queries)]
            questions = [" ".join(rng.sample(p.rstrip(".").split(), 3)) for p in pages]
            for q in questions[:20]:  # warm the caches and the HNSW pages
                await library.search(q)
            e2e = []
            for q in questions:
                t = time.perf_counter()
                await library.search(q)
                e2e.append((time.perf_counter() - t) * 1000)
            vectors = embedder.embed(questions)
            sql = []
            for v in vectors:
                t = time.perf_counter()
                await db.fetch("SELECT id FROM passages ORDER BY embedding <=> %s LIMIT 20", (v,))
                sql.append((time.perf_counter() - t) * 1000)
            print(f"search end to end ({queries} questions, warm): p50 {_pct(e2e, 50):.1f} ms,"
                  f" p95 {_pct(e2e, 95):.1f} ms")
            print(f"vector SQL alone (HNSW, top 20): p50 {_pct(sql, 50):.2f} ms,"
                  f" p95 {_pct(sql, 95):.2f} ms")
            embed_ms = []
            for q in questions:
                t = time.perf_counter()
                embedder.embed([q])
                embed_ms.append((time.perf_counter() - t) * 1000)
            print(f"question embedding alone: p50 {_pct(embed_ms, 50):.1f} ms,"
                  f" p95 {_pct(embed_ms, 95):.1f} ms")
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m app.manuals.bench")
    parser.add_argument("--passages", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true",
                        help=f"keep the corpus in the database {KEPT_DATABASE} and reuse it")
    args = parser.parse_args()
    asyncio.run(run(args.passages, args.queries, args.keep))


if __name__ == "__main__":
    main()
