"""Manual search measured on a labelled set, apart from any chat model: every question searched
in a fresh eval database (the fixture manuals ingested with the embedder asked for), fused and
each half alone, and the figures of each.

* **Answerable** questions (their manual has text): recall@1, recall@5 and MRR over the first
  DEPTH results; a result answers when its manual and page are one the question names.
* **Only in an attached manual** (the manual has no text layer): search cannot return it, so
  these are never counted as hits or misses. They are reported apart: whether the manual is
  attached to a turn on its machine's page (how the assistant is meant to read it), and how
  many got a passage search was as sure of as a real answer (the no-answer rule below).
* **No answer**: search always returns passages when the library has any, so "no answer" is
  measured on scores: a no-answer question counts against search when its best passage scores
  at or above the median best score of the answerable questions, in that mode's own scale (the
  RRF sum, ts_rank, cosine similarity). Lower is better; a text search that matches nothing is
  an honest no answer.

Every question is searched across all the manuals, as search_manual does when the model names
no machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from app.embed import Embedder
from app.manuals.library import ManualLibrary, SearchMode
from app.settings import Settings
from evals.calibration.retrieval.labelled import Kind, Labelled
from evals.calibration.retrieval.metrics import (
    confident,
    first_hit,
    mean_reciprocal_rank,
    recall_at,
    threshold,
)
from evals.execute.env import eval_env
from evals.settings import conninfo

MODES: tuple[SearchMode, ...] = ("fused", "text", "vector")
# Results asked of each search: MRR is over these (the assistant is shown DEFAULT_RESULTS).
DEPTH = 10


class Found(BaseModel):
    """A search result as the report keeps it."""

    manual: str
    page: int
    score: float


class Searched(BaseModel):
    """One question searched in one mode."""

    rank: int | None  # of the first result that answers it (answerable questions only)
    found: list[Found]

    @property
    def best(self) -> float | None:
        return self.found[0].score if self.found else None


class Outcome(BaseModel):
    id: str
    where: str  # file:line
    kind: Kind
    question: str
    expected: list[str]  # "Form 4 Manual p. 2"
    modes: dict[SearchMode, Searched]
    attached: bool | None = None  # attached-only: its manual is attached on the machine's page


class Share(BaseModel):
    """How many of n questions search was confident about."""

    n: int
    confident: int


class ModeFigures(BaseModel):
    mode: SearchMode
    n: int  # answerable questions
    recall_at_1: float | None
    recall_at_5: float | None
    mrr: float | None
    threshold: float | None  # the answerable questions' median best score (None: no result)
    no_answer: Share
    attached: Share


class RetrievalReport(BaseModel):
    what: Literal["manuals"] = "manuals"
    set: str
    embedder: str
    depth: int
    counts: dict[Kind, int]
    attached_on_page: int  # attached-only questions whose manual a turn on its page is given
    modes: list[ModeFigures]
    outcomes: list[Outcome]


async def search_all(library: ManualLibrary, labelled: Sequence[Labelled],
                     modes: Sequence[SearchMode] = MODES, depth: int = DEPTH) -> list[Outcome]:
    """Every question searched in every mode, in order."""
    out = []
    for q in labelled:
        searched = {}
        for mode in modes:
            results = await library.scored(q.item.question, k=depth, mode=mode)
            found = [Found(manual=r["title"], page=r["page"], score=float(score))
                     for score, r in results]
            rank = first_hit([(f.manual, f.page) for f in found], q.expected) \
                if q.kind == "searchable" else None
            searched[mode] = Searched(rank=rank, found=found)
        attached = None
        if q.kind == "attached" and q.item.answer is not None:
            titles = {m["title"] for m in await library.attached_for(q.slug)}
            attached = q.item.answer.manual in titles
        out.append(Outcome(id=q.item.id, where=q.where, kind=q.kind, question=q.item.question,
                           expected=[f"{m} p. {p}" for m, p in sorted(q.expected)],
                           modes=searched, attached=attached))
    return out


def figures(outcomes: Sequence[Outcome], mode: SearchMode) -> ModeFigures:
    """One mode's figures (pure)."""
    answerable = [o.modes[mode] for o in outcomes if o.kind == "searchable"]
    ranks = [s.rank for s in answerable]
    at_least = threshold([s.best for s in answerable])

    def share(kind: Kind) -> Share:
        group = [o.modes[mode] for o in outcomes if o.kind == kind]
        return Share(n=len(group), confident=sum(confident(s.best, at_least) for s in group))

    return ModeFigures(mode=mode, n=len(ranks), recall_at_1=recall_at(ranks, 1),
                       recall_at_5=recall_at(ranks, 5), mrr=mean_reciprocal_rank(ranks),
                       threshold=at_least, no_answer=share("none"),
                       attached=share("attached"))


def report(outcomes: Sequence[Outcome], *, set_name: str, embedder: str,
           modes: Sequence[SearchMode] = MODES, depth: int = DEPTH) -> RetrievalReport:
    counts = Counter(o.kind for o in outcomes)
    return RetrievalReport(
        set=set_name, embedder=embedder, depth=depth,
        counts={k: counts[k] for k in ("searchable", "attached", "none")},
        attached_on_page=sum(bool(o.attached) for o in outcomes),
        modes=[figures(outcomes, m) for m in modes], outcomes=list(outcomes))


async def measure_manuals(settings: Settings, embedder: Embedder,
                          labelled: Sequence[Labelled], *, set_name: str) -> RetrievalReport:
    """Search every question in a fresh eval database (the fixture manuals ingested with this
    embedder, cloned from its template), then drop it."""
    async with eval_env(conninfo(settings), settings, embedder) as env:
        outcomes = await search_all(env.library, labelled)
    return report(outcomes, set_name=set_name, embedder=embedder.name)
