"""The manual library: ingestion, passage search and the manuals attached to a turn."""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from app.db import Database
from app.embed import Embedder
from app.manuals.blobs import BlobStore
from app.manuals.chunk import passages
from app.manuals.pdf import PdfError, read_pages

SEARCH_CANDIDATES = 20
RRF_K = 60  # reciprocal-rank fusion constant (the usual 60)
# A question of common words can match a large share of the passages. Ranking at most 200 of
# them, not 1000, took search p50 from 28 to 22 ms at 50,000 synthetic passages.
TEXT_MATCH_CAP = 200
DEFAULT_RESULTS = 4
# Both halves fused (what the app searches with), or one half alone.
SearchMode = Literal["fused", "text", "vector"]
# What a search result needs of each candidate passage `c`.
_DETAILS = "c.id, p.page, p.text, m.title, m.blob_key, mc.slug, mc.name AS machine"
_DETAILS_JOIN = (" JOIN passages p ON p.id = c.id JOIN manuals m ON m.id = p.manual_id"
                 " JOIN machines mc ON mc.id = m.machine_id")


class IngestError(ValueError):
    """A manual that cannot be ingested; the message names the file."""


@dataclass(frozen=True)
class IngestResult:
    manual_id: int
    title: str
    key: str
    pages: int
    passages: int
    has_text: bool
    # Pages whose text had NUL or other control characters removed (PostgreSQL refuses NUL).
    cleaned_pages: tuple[int, ...] = ()


def blob_key(name: str, slug: str) -> str:
    """Where a machine's manual file is stored."""
    return f"manuals/{slug}/{_safe_name(name)}"


def _safe_name(name: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", Path(name).stem.lower()).strip("-") or "manual"
    return f"{stem}.pdf"


class ManualLibrary:
    def __init__(self, db: Database, store: BlobStore, embedder: Embedder) -> None:
        self.db = db
        self.store = store
        self.embedder = embedder

    async def ingest(self, data: bytes, *, name: str, slug: str, title: str) -> IngestResult:
        """Store a PDF, its page texts and its embedded passages (replacing a same-key one)."""
        try:
            # pypdf decodes in Python: off the event loop.
            pdf = await asyncio.to_thread(read_pages, data, name)
        except PdfError as exc:
            raise IngestError(str(exc)) from exc
        texts = pdf.texts
        machine = await self.db.fetchone("SELECT id FROM machines WHERE slug = %s", (slug,))
        if machine is None:
            raise IngestError(f"{name}: no machine with slug {slug!r}")
        chunks = [(i + 1, p) for i, text in enumerate(texts) for p in passages(text)]
        vectors = await asyncio.to_thread(self.embedder.embed, [p for _, p in chunks])
        key = blob_key(name, slug)
        self.store.put(key, data)
        async with self.db.transaction() as conn:
            await conn.execute("DELETE FROM manuals WHERE blob_key = %s", (key,))
            cur = await conn.execute(
                "INSERT INTO manuals (machine_id, title, blob_key, sha256, page_count, has_text)"
                " VALUES (%s,%s,%s,%s,%s,%s) RETURNING id",
                (machine["id"], title, key, hashlib.sha256(data).hexdigest(), len(texts),
                 any(texts)),
            )
            row = await cur.fetchone()
            assert row is not None
            async with conn.cursor() as c:
                await c.executemany(
                    "INSERT INTO manual_pages (manual_id, page, text) VALUES (%s,%s,%s)",
                    [(row["id"], i + 1, t) for i, t in enumerate(texts)],
                )
                await c.executemany(
                    "INSERT INTO passages (manual_id, page, text, embedding) VALUES (%s,%s,%s,%s)",
                    [(row["id"], page, text, vec) for (page, text), vec in zip(chunks, vectors,
                                                                                strict=True)],
                )
        return IngestResult(row["id"], title, key, len(texts), len(chunks), any(texts),
                            pdf.cleaned)

    async def ingest_files(
        self, files: list[tuple[Path, str, str]]
    ) -> tuple[list[IngestResult], list[str]]:
        """Ingest (path, slug, title) triples; a bad file is an error line, not a crash."""
        done, errors = [], []
        for path, slug, title in files:
            try:
                data = path.read_bytes()
                done.append(await self.ingest(data, name=path.name, slug=slug, title=title))
            except (OSError, IngestError) as exc:
                errors.append(str(exc) if isinstance(exc, IngestError) else f"{path}: {exc}")
        return done, errors

    async def search(
        self, question: str, *, slug: str | None = None, k: int = DEFAULT_RESULTS,
        mode: SearchMode = "fused",
    ) -> list[dict[str, Any]]:
        """The best passages for a question: vector and full-text ranks fused (RRF), or one
        half alone (`mode`, for measuring each half: `python -m evals retrieval`)."""
        return [result for _, result in await self.scored(question, slug=slug, k=k,
                                                          mode=mode)]

    async def scored(
        self, question: str, *, slug: str | None = None, k: int = DEFAULT_RESULTS,
        mode: SearchMode = "fused",
    ) -> list[tuple[float, dict[str, Any]]]:
        """`search`'s results, best first, each with its score: the RRF sum (fused), the
        full-text rank (text), or the cosine similarity (vector).

        Fused runs two queries, each returning its candidates with their details: the
        full-text one runs on its own connection while the question is embedded, the vector
        one after.
        """
        params: dict[str, Any] = {"q": question, "n": SEARCH_CANDIDATES, "slug": slug,
                                  "cap": TEXT_MATCH_CAP}
        only = "" if slug is None else (
            " AND manual_id IN (SELECT m.id FROM manuals m JOIN machines mc"
            " ON mc.id = m.machine_id WHERE mc.slug = %(slug)s)")
        if mode == "text":
            return [(row["score"], self._result(row))
                    for row in (await self._by_text(params, only))[:k]]
        # Full text needs every word (websearch syntax) and ranks at most TEXT_MATCH_CAP
        # matches, so a question of common words stays cheap at any corpus size.
        text_task = None if mode == "vector" else asyncio.create_task(
            self._by_text(params, only))
        by_text: list[dict[str, Any]] = []
        try:
            # One thread, while PostgreSQL runs the full-text query on the other core.
            [vector] = await asyncio.to_thread(self.embedder.embed, [question])
            # The nearest passages alone first, so the HNSW index serves the ORDER BY.
            by_vector = await self.db.fetch(
                "SELECT " + _DETAILS + ", c.distance FROM (SELECT id, embedding <=> %(v)s AS"
                " distance FROM passages WHERE TRUE" + only + " ORDER BY embedding <=> %(v)s"
                " LIMIT %(n)s) c" + _DETAILS_JOIN + " ORDER BY c.distance",
                {**params, "v": vector})
        finally:
            if text_task is not None:
                by_text = await text_task
        if mode == "vector":
            return [(1.0 - row["distance"], self._result(row)) for row in by_vector[:k]]
        scores: dict[int, float] = {}
        rows: dict[int, dict[str, Any]] = {}
        for ranked in (by_vector, by_text):
            for rank, row in enumerate(ranked):
                scores[row["id"]] = scores.get(row["id"], 0.0) + 1.0 / (RRF_K + rank + 1)
                rows[row["id"]] = row
        best = sorted(scores, key=lambda i: -scores[i])[:k]
        return [(scores[i], self._result(rows[i])) for i in best]

    async def _by_text(self, params: dict[str, Any], only: str) -> list[dict[str, Any]]:
        """The full-text candidates with their details, best first."""
        return await self.db.fetch(
            "SELECT " + _DETAILS + ", c.score FROM (SELECT id, ts_rank(tsv,"
            " websearch_to_tsquery('english', %(q)s)) AS score FROM (SELECT id, tsv FROM"
            " passages WHERE tsv @@ websearch_to_tsquery('english', %(q)s)" + only +
            " LIMIT %(cap)s) matched ORDER BY score DESC LIMIT %(n)s) c" + _DETAILS_JOIN +
            " ORDER BY c.score DESC",
            params,
        )

    def _result(self, row: dict[str, Any]) -> dict[str, Any]:
        return {
            "ref": f"p{row['id']}",
            "title": row["title"],
            "machine": row["machine"],
            "page": row["page"],
            "url": f"{self.store.address(row['blob_key'])}#page={row['page']}",
            "text": row["text"],
        }

    async def attached_for(self, slug: str | None) -> list[dict[str, Any]]:
        """Manuals with no searchable text for a machine: attached to the turn whole."""
        if slug is None:
            return []
        rows = await self.db.fetch(
            "SELECT m.id, m.title, m.blob_key, m.page_count FROM manuals m"
            " JOIN machines mc ON mc.id = m.machine_id"
            " WHERE mc.slug = %s AND NOT m.has_text ORDER BY m.id",
            (slug,),
        )
        return [
            {"ref": f"m{r['id']}", "title": r["title"], "key": r["blob_key"],
             "address": self.store.address(r["blob_key"]), "page_count": r["page_count"]}
            for r in rows
        ]

    async def page_texts(self, key: str) -> dict[int, str]:
        """The stored text of each page of a manual, by blob key."""
        rows = await self.db.fetch(
            "SELECT p.page, p.text FROM manual_pages p JOIN manuals m ON m.id = p.manual_id"
            " WHERE m.blob_key = %s",
            (key,),
        )
        return {r["page"]: r["text"] for r in rows}
