"""Essays that trained raters scored, for checking the judge model's reading against theirs
(`python -m evals calibrate --set asap2|ellipse --file F`).

Neither set is shipped (their files are large; give the path). Each is a CSV as published:

* **ASAP 2.0** (`ASAP2_train_sourcetexts.csv`): `essay_id`, `full_text` and `score`, the
  holistic score (1 to 6) of argumentative essays by US students in grades 6 to 12; the task is
  read from `assignment` (else `prompt_name`) when there is one. The source texts are not sent.
* **ELLIPSE** (the corpus's CSV, or the Feedback Prize's `train.csv`): `text_id` (or
  `text_id_kaggle`), `full_text` and the analytic scores, 1 to 5 in half points, of essays by
  English language learners: `Overall`, `Cohesion`, `Syntax`, `Vocabulary`, `Phraseology`,
  `Grammar`, `Conventions` (any case; the columns the file has are rated). The task is
  `prompt` when there is one.

The judge scores each essay on each of the set's rubrics through the scoring prompt
(evals/judge/_score.py), and scores.py sets its scores beside the raters'. Every problem with
the file is a `file:line` error, all reported together, and a file with any loads nothing.
The rubrics below are this project's short paraphrase of the sets' rubrics, not their text.
"""

from __future__ import annotations

import asyncio
import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.calibrate import CalibrationError
from evals.calibration.scores import Scored
from evals.judge import ScoreInput, UnreadableScore, score

MAX_ERRORS = 20  # a file wrong on every row says so in twenty lines, not twenty thousand


@dataclass(frozen=True)
class Trait:
    """One column of the raters' scores, and the rubric the judge scores it on."""

    column: str
    rubric: str


@dataclass(frozen=True)
class EssaySet:
    name: str
    ids: tuple[str, ...]  # the id column, by each name a published copy gives it
    tasks: tuple[str, ...]  # columns that hold the writing task, the first one found
    traits: tuple[Trait, ...]
    scale: tuple[float, ...]
    every_trait: bool  # each trait's column is required (else: at least one)


_HOLISTIC = (
    "The essay's overall quality as an argument, as a trained rater of a six-point holistic"
    " scale judges it:\n"
    "6: a clear, insightful position, developed with well-chosen reasons and evidence; well"
    " organised and coherent; varied, precise language; few if any errors.\n"
    "5: a clear position, well developed with good reasons and evidence; organised; good"
    " control of language; few errors.\n"
    "4: a position developed adequately; mostly organised; adequate language with some"
    " errors that do not block meaning.\n"
    "3: a position with thin or uneven development; weak organisation; limited or imprecise"
    " language; errors that sometimes get in the way.\n"
    "2: a vague or limited position with little development; poor organisation; frequent"
    " errors that often get in the way.\n"
    "1: no real position or development; disorganised; errors throughout that block meaning.")
ASAP2 = EssaySet("asap2", ("essay_id",), ("assignment", "prompt_name"),
                 (Trait("score", _HOLISTIC),), (1, 2, 3, 4, 5, 6), every_trait=True)

_LEVELS = ("\n5: controls this as a proficient writer does, with few if any errors.\n"
           "4: good control, with errors that rarely get in the way.\n"
           "3: uneven control: errors sometimes get in the way of meaning.\n"
           "2: limited control: errors often get in the way.\n"
           "1: very limited control: errors block meaning throughout.\n"
           "A half point is for an essay between two levels.")
_ANALYTIC = {
    "Overall": "The writer's overall English language proficiency in this essay: how"
               " clearly, accurately and fluently they communicate their ideas.",
    "Cohesion": "How the text holds together: its organisation, paragraphs, and the linking"
                " words and references that connect sentences and ideas.",
    "Syntax": "The range and control of sentence structures: clauses, phrases, word order.",
    "Vocabulary": "The range and precision of the words used for the topic.",
    "Phraseology": "Multi-word units (collocations, idioms, set phrases) used as a fluent"
                   " writer uses them.",
    "Grammar": "Accurate grammar: verb forms and tenses, agreement, word classes, plurals,"
               " articles.",
    "Conventions": "Spelling, capitalisation and punctuation.",
}
ELLIPSE = EssaySet("ellipse", ("text_id", "text_id_kaggle"), ("prompt",),
                   tuple(Trait(name, what + _LEVELS) for name, what in _ANALYTIC.items()),
                   tuple(n / 2 for n in range(2, 11)), every_trait=False)
SETS = {s.name: s for s in (ASAP2, ELLIPSE)}


@dataclass(frozen=True)
class Essay:
    id: str
    line: int
    text: str
    task: str
    scores: dict[str, float]  # trait column -> the raters' score


def load_essays(path: Path, essays: EssaySet, limit: int) -> tuple[list[Essay], list[Trait]]:
    """The first `limit` essays of a set's CSV, and the traits the file scores; every problem
    in the whole file a `file:line` error (CalibrationError)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CalibrationError(f"{path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise CalibrationError(f"{path.name}:{line}: not UTF-8 text ({exc.reason})") from exc
    found, traits, errors = _read(_Rows(io.StringIO(text, newline=""), path.name), path.name,
                                  essays)
    if errors:
        more = len(errors) - MAX_ERRORS
        raise CalibrationError("\n".join(errors[:MAX_ERRORS]
                                         + ([f"… and {more} more"] if more > 0 else [])))
    if not found:
        raise CalibrationError(f"{path.name}:1: no essay")
    return found[:limit], traits


class _Rows:
    """A CSV's rows with the line each starts on (an essay spans many lines); a CSV error a
    `file:line` error."""

    def __init__(self, f: TextIO, name: str) -> None:
        self.reader = csv.reader(f, strict=True)  # a stray quote is an error, not a guess
        self.name = name

    def __iter__(self) -> _Rows:
        return self

    def __next__(self) -> tuple[int, list[str]]:
        line = self.reader.line_num + 1
        try:
            return line, next(self.reader)
        except csv.Error as exc:
            raise _Broken(f"{self.name}:{line}: CSV: {exc}") from exc


class _Broken(ValueError):
    """A file that cannot be read past this line."""


def _read(rows: _Rows, name: str, essays: EssaySet
          ) -> tuple[list[Essay], list[Trait], list[str]]:
    """The essays, the traits the header names, and every problem."""
    try:
        _, header = next(rows)
    except StopIteration:
        return [], [], [f"{name}:1: an empty file, not a CSV with a header row"]
    except _Broken as exc:
        return [], [], [str(exc)]
    columns = {h.strip().lower(): i for i, h in enumerate(header)}
    id_col = next((columns[c] for c in essays.ids if c in columns), None)
    traits = [t for t in essays.traits if t.column.lower() in columns]
    missing = ([] if id_col is not None else [" or ".join(essays.ids)]) \
        + ([] if "full_text" in columns else ["full_text"])
    if essays.every_trait:
        missing += [t.column for t in essays.traits if t not in traits]
    elif not traits:
        missing.append("a score column (" + ", ".join(t.column for t in essays.traits) + ")")
    if missing:
        return [], [], [f"{name}:1: missing column(s) {', '.join(missing)} for the"
                          f" {essays.name} set (the header has: {', '.join(header)})"]
    assert id_col is not None
    text_col = columns["full_text"]
    task_col = next((columns[c] for c in essays.tasks if c in columns), None)
    out: list[Essay] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    try:
        for line, row in rows:
            if not any(cell.strip() for cell in row):
                continue  # a blank line
            if len(row) != len(header):
                errors.append(f"{name}:{line}: {len(row)} fields, the header has"
                              f" {len(header)}")
                continue
            essay_id, text = row[id_col].strip(), row[text_col]
            problems = [] if essay_id else ["no id"]
            if essay_id in seen:
                problems.append(f"id {essay_id!r} again (first at line {seen[essay_id]})")
            if not text.strip():
                problems.append("no full_text")
            scores = {}
            for t in traits:
                value = row[columns[t.column.lower()]].strip()
                got = _score(value, essays.scale)
                if isinstance(got, str):
                    problems.append(f"{t.column} {value!r}: {got}")
                else:
                    scores[t.column] = got
            if problems:
                errors += [f"{name}:{line}: {p}" for p in problems]
                continue
            seen[essay_id] = line
            task = row[task_col].strip() if task_col is not None else ""
            out.append(Essay(essay_id, line, text, task or "(not given)", scores))
    except _Broken as exc:
        errors.append(str(exc))
    return out, traits, errors


def _score(value: str, scale: tuple[float, ...]) -> float | str:
    try:
        number = float(value)
    except ValueError:
        return "not a number"
    if number not in scale:
        return f"not a score on the scale ({', '.join(f'{s:g}' for s in scale)})"
    return number


async def rate_essays(essays: list[Essay], traits: list[Trait], essay_set: EssaySet,
                      model: ChatModel, concurrency: int = 2) -> dict[str, list[Scored]]:
    """Per trait: the judge's score of every essay beside the raters'. An essay the judge
    could not score is kept as unrated, never scored low."""
    limit = asyncio.Semaphore(concurrency)
    out: dict[str, list[Scored]] = {t.column: [] for t in traits}

    async def one(essay: Essay, trait: Trait) -> None:
        item = ScoreInput(trait.rubric, essay_set.scale, essay.text, essay.task)
        async with limit:
            try:
                s = await score(model, item)
                out[trait.column].append(Scored(essay.id, essay.scores[trait.column], s.value,
                                                s.reason))
            except (UnreadableScore, ModelCallError) as exc:
                out[trait.column].append(Scored(essay.id, essay.scores[trait.column], None,
                                                str(exc)))

    await asyncio.gather(*(one(e, t) for e in essays for t in traits))
    return out
