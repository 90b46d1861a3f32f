"""The labelled questions of a retrieval set (`manuals.yaml` beside this module): each with the
manual and page or pages that answer it, or none; validated against the fixture manuals' PDFs.

A question's kind follows from its answer, never from a label: `searchable` when the manual
has a text layer, `attached` when it has none (search cannot find it: the manual is attached
whole to a turn on its machine's page), `none` when no manual answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, field_validator

from app.manuals.demo import DEMO_MANUALS, FIXTURE_DIR
from app.manuals.pdf import read_pages
from evals.load.yamlfile import field_errors, line_of, read_list, short

MANUALS_SET = Path(__file__).parent / "manuals.yaml"

Kind = Literal["searchable", "attached", "none"]


class RetrievalSetError(ValueError):
    """A labelled set that does not load: every error, each 'file:line: message'."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class FixtureManual:
    """A fixture manual as the eval's database holds it."""

    title: str
    slug: str  # its machine
    pages: int
    has_text: bool  # any page with a text layer, as ingestion decides


@lru_cache(maxsize=1)
def fixture_manuals() -> dict[str, FixtureManual]:
    """The fixture manuals by title, their pages and text layer read from the PDFs."""
    out = {}
    for file, slug, title in DEMO_MANUALS:
        texts = read_pages((FIXTURE_DIR / file).read_bytes(), file).texts
        out[title] = FixtureManual(title, slug, len(texts), any(texts))
    return out


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    manual: str
    pages: list[PositiveInt] = Field(min_length=1)


class Question(BaseModel):
    """One item of the file."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=80)
    # search_manual's own limits on a question
    question: str = Field(min_length=2, max_length=500)
    answer: Answer | None  # `none` in the file: no manual answers it
    why: str = ""

    @field_validator("answer", mode="before")
    @classmethod
    def _none(cls, value: Any) -> Any:
        if value == "none":
            return None
        if value is None:
            raise ValueError("write `answer: none` for a question no manual answers")
        return value


@dataclass(frozen=True)
class Labelled:
    """A loaded question: where it is, what answers it, and its kind."""

    where: str  # file:line
    item: Question
    kind: Kind

    @property
    def expected(self) -> frozenset[tuple[str, int]]:
        """The (manual title, page) pairs that answer it; any one found is a hit."""
        a = self.item.answer
        return frozenset() if a is None else frozenset((a.manual, p) for p in a.pages)

    @property
    def slug(self) -> str | None:
        """The machine whose manual answers it."""
        a = self.item.answer
        return None if a is None else fixture_manuals()[a.manual].slug


def load_set(path: Path = MANUALS_SET) -> list[Labelled]:
    """Every question of a labelled set; all its errors raised together (file:line)."""
    data, lines, errors = read_list(path, "a retrieval set is a list of questions")
    if errors:
        raise RetrievalSetError(errors)
    out: list[Labelled] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(data):
        labelled, problems = _question(raw, path.name, (i,), lines, seen)
        errors += problems
        if labelled is not None:
            out.append(labelled)
    if errors:
        raise RetrievalSetError(errors)
    return out


def _question(raw: Any, file: str, base: tuple[Any, ...], lines: dict[tuple[Any, ...], int],
              seen: dict[str, str]) -> tuple[Labelled | None, list[str]]:
    """One item, checked against the fixture manuals; `seen` maps each id to where it is."""
    def err(loc: tuple[Any, ...], message: str) -> tuple[None, list[str]]:
        return None, [f"{file}:{line_of((*base, *loc), lines)}: {message}"]

    if not isinstance(raw, dict):
        return err((), "a question is a mapping (id, question, answer)")
    try:
        item = Question.model_validate(raw)
    except ValidationError as exc:
        return None, [f"{file}:{line_of((*base, *loc), lines)}: {message}"
                      for loc, message in field_errors(exc, "(question)")]
    where = f"{file}:{line_of(base, lines)}"
    if item.id in seen:
        return err(("id",), f"duplicate id {item.id!r} (first at {seen[item.id]})")
    seen[item.id] = where
    if item.answer is None:
        return Labelled(where, item, "none"), []
    manuals = fixture_manuals()
    manual = manuals.get(item.answer.manual)
    if manual is None:
        return err(("answer", "manual"), f"answer.manual: unknown manual"
                   f" {short(item.answer.manual)}; the fixture manuals are"
                   f" {', '.join(map(repr, manuals))}")
    beyond = [p for p in item.answer.pages if p > manual.pages]
    if beyond:
        return err(("answer", "pages"), f"answer.pages: {manual.title} has {manual.pages}"
                   f" pages, not page {', '.join(map(str, beyond))}")
    return Labelled(where, item, "searchable" if manual.has_text else "attached"), []
