"""People's labels of judged verdicts, kept in the run store (table eval_labels).

A judged verdict is named by its run, item, repetition, attempt and check: the check's place
among the attempt's checks (1-based) and the check as it is described (`judge`, or a scenario
criterion with its text), so a case written again with other checks is told apart. Each person
labels a verdict once; two people's labels of one verdict are both kept, and when they differ
(pass against fail) the verdict is a disagreement: counted and shown, never settled by whoever
wrote last. `skip` says the person could not tell; it counts for neither side.

A label also says under which rubric it was given: a verdict an evaluator pack's prompt gave
is labelled with the pack's rubric in view (`rubric_pack`, and `rubric_hash`: the pack
prompt's hash as shown, which must be the verdict's), and only such a label counts for the
pack's calibration. No pack (both None): the case's own rubric or the scenario criterion, and
every label stored before this was recorded.

A labeller's name is one person's: it is normalised (NFKC, so fullwidth or decomposed letters
read as the plain ones; spaces collapsed), and a name mixing scripts (a Cyrillic `а` among Latin
letters, which looks the same and would count as another person) is refused. A label's time
lies within the project's life: not before it began, not in the future beyond clock skew.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

import psycopg
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from app.text import CONTROL, control_named
from evals.record.results import Attempt, CaseResult, CheckResult
from evals.record.run import RunRecord
from evals.record.store import RunStore, StoreError

LabelVerdict = Literal["pass", "fail", "skip"]
LABEL_VERDICTS: tuple[LabelVerdict, ...] = ("pass", "fail", "skip")
QUEUE_RUNS = 30  # the newest stored runs whose judged verdicts the queue offers
MAX_NOTE = 2000
MAX_NAME = 80
PG_INT_MAX = 2**31 - 1  # the store's integer columns

LABELS_SINCE = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)  # the project's first day: none older
CLOCK_SKEW = dt.timedelta(minutes=5)  # how far ahead another machine's clock may be

Key = tuple[str, str, int, int, int]  # run, item, repetition, attempt, check

# Scripts that one person's name may mix: Han with Japanese kana, Korean Hangul or Bopomofo
# (Unicode's "highly restrictive" sets, UTS #39, less their Latin).
_MIXES = ({"CJK", "HIRAGANA", "KATAKANA"}, {"CJK", "HANGUL"}, {"CJK", "BOPOMOFO"})


def _normal(name: str) -> str:
    """NFKC (fullwidth, decomposed or compatibility letters as the plain ones), spaces
    collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).split())


def person_name(value: str) -> str:
    """A labeller's name as one person has one: normalised (`_normal`). ValueError for a name
    whose letters come from scripts no one name mixes."""
    name = _normal(value)
    scripts: dict[str, str] = {}
    for ch in name:
        if unicodedata.category(ch).startswith("L"):
            # A letter's Unicode name starts with its script: LATIN, CYRILLIC, GREEK, CJK, …
            scripts.setdefault(unicodedata.name(ch, "UNKNOWN").split()[0], ch)
    if len(scripts) > 1 and not any(set(scripts) <= mix for mix in _MIXES):
        letters = ", ".join(f"{ch} U+{ord(ch):04X} {unicodedata.name(ch, '?')}"
                            for ch in scripts.values())
        raise ValueError(f"{value!r} mixes scripts ({letters}): a name is written in one"
                         " script (one that mixes them can look like another person's name)")
    return name


def _plain(value: str | None) -> str | None:
    if value is None:
        return value
    bad = CONTROL.search(value)
    if bad:
        raise ValueError(f"{control_named(bad.group())}: plain text only")
    return value


class VerdictRef(BaseModel):
    """Which judged verdict: run, item, repetition, attempt, and the check (its place among
    the attempt's checks, and how it is described)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    run: str = Field(min_length=1)
    item: str = Field(min_length=1)
    repetition: int = Field(ge=1, le=PG_INT_MAX)
    attempt: int = Field(ge=1, le=PG_INT_MAX)
    check: int = Field(ge=1, le=PG_INT_MAX)
    kind: str = Field(min_length=1)

    _plain_text = field_validator("run", "item", "kind")(_plain)

    @property
    def key(self) -> Key:
        return (self.run, self.item, self.repetition, self.attempt, self.check)

    def ref(self) -> VerdictRef:
        return VerdictRef(run=self.run, item=self.item, repetition=self.repetition,
                          attempt=self.attempt, check=self.check, kind=self.kind)

    def __str__(self) -> str:
        return (f"{self.run}/{self.item} repetition {self.repetition} attempt {self.attempt}"
                f" check {self.check} ({self.kind})")


STORED = {"stored": True}  # validation context: a row read back from the store


def _stored(info: ValidationInfo) -> bool:
    """A label read back from the store is taken as it was stored: a name or time that today's
    checks refuse but an older version kept is still evidence, and still readable."""
    return bool(info.context and info.context.get("stored"))


class Label(VerdictRef):
    """One person's label of one judged verdict, and the pack whose rubric it was given
    under (None: the case's own, or the scenario criterion)."""

    verdict: LabelVerdict
    note: str = Field(default="", max_length=MAX_NOTE)
    by: str = Field(min_length=1, max_length=MAX_NAME)
    at: dt.datetime | None = None  # None until stored: the store's clock sets it
    # The evaluator pack (PACK/NAME) whose rubric and must_not were in view, and that pack
    # prompt's hash as shown; both None when the case's own rubric was.
    rubric_pack: str | None = Field(default=None, min_length=1, max_length=MAX_NAME * 2)
    rubric_hash: str | None = Field(default=None, min_length=1, max_length=MAX_NAME)

    _plain_words = field_validator("note", "by", "rubric_pack", "rubric_hash")(_plain)

    @field_validator("by")
    @classmethod
    def _one_person(cls, value: str, info: ValidationInfo) -> str:
        return value if _stored(info) else person_name(value)

    @field_validator("at")
    @classmethod
    def _in_the_project_s_life(cls, value: dt.datetime | None,
                               info: ValidationInfo) -> dt.datetime | None:
        if value is None or _stored(info):
            return value
        if value.tzinfo is None:
            raise ValueError(f"{value.isoformat()} has no time zone: write it as"
                             " 2026-12-01T10:00:00+00:00")
        now = dt.datetime.now(dt.UTC)
        if value > now + CLOCK_SKEW:
            raise ValueError(f"{value.isoformat()} is in the future (the clock here says"
                             f" {now.isoformat(timespec='seconds')})")
        if value < LABELS_SINCE:
            raise ValueError(f"{value.isoformat()} is before {LABELS_SINCE.date()}, when this"
                             " project began: no label is that old")
        return value

    @model_validator(mode="after")
    def _rubric_whole(self) -> Label:
        if (self.rubric_pack is None) != (self.rubric_hash is None):
            raise ValueError("rubric_pack and rubric_hash are given together, or neither")
        return self

    @model_serializer(mode="wrap")
    def _without_no_pack(self, handler: SerializerFunctionWrapHandler,
                         info: SerializationInfo) -> dict[str, object]:
        # A label under the case's own rubric is written as it was before packs' rubrics were
        # recorded (an exported labels file reads the same).
        data: dict[str, object] = handler(self)
        if self.rubric_pack is None:
            data.pop("rubric_pack", None)
            data.pop("rubric_hash", None)
        return data

    def under_pack(self, pack: str, prompt_hash: str) -> bool:
        """Given with this pack prompt's rubric in view (its hash as the verdict's)."""
        return (self.rubric_pack, self.rubric_hash) == (pack, prompt_hash)

    def same_as(self, other: Label) -> bool:
        """The same person said the same of the same verdict, under the same rubric (when
        aside)."""
        return (self.ref(), self.verdict, self.note, self.by, self.rubric_pack,
                self.rubric_hash) == (other.ref(), other.verdict, other.note, other.by,
                                      other.rubric_pack, other.rubric_hash)


class LabelError(StoreError):
    """Labels that cannot be stored: each problem with the label's index in what was given.
    Nothing of them was written."""

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


@dataclass(frozen=True)
class Judged:
    """A judged verdict of a stored run, as the queue offers it."""

    ref: VerdictRef
    case: CaseResult
    attempt: Attempt
    check: CheckResult


def judged_verdicts(record: RunRecord) -> list[Judged]:
    """Every judged check of a run that holds a verdict to compare with (the judge was asked
    and answered readably), every attempt's."""
    found = []
    for case in record.cases:
        for a, attempt in enumerate(case.attempts, start=1):
            for n, check in enumerate(attempt.checks, start=1):
                if check.judged and check.judge is not None and check.judge.verdict is not None:
                    ref = VerdictRef(run=str(record.run_id), item=case.id,
                                     repetition=case.repetition, attempt=a, check=n,
                                     kind=check.kind)
                    found.append(Judged(ref, case, attempt, check))
    return found


def find_check(record: RunRecord, ref: VerdictRef) -> CheckResult | None:
    """The judged check a reference names in a run, if it is still there as described."""
    for case in record.cases:
        if (case.id, case.repetition) == (ref.item, ref.repetition) and \
                ref.attempt <= len(case.attempts):
            checks = case.attempts[ref.attempt - 1].checks
            if ref.check <= len(checks):
                check = checks[ref.check - 1]
                if check.kind == ref.kind and check.judged:
                    return check
    return None


_COLUMNS = ("run_id AS run, case_id AS item, repetition, attempt, n AS check, kind, verdict,"
            " note, labelled_by AS by, labelled_at AS at, rubric_pack, rubric_hash")
_KEY = "run_id = %s AND case_id = %s AND repetition = %s AND attempt = %s AND n = %s"


async def add_labels(store: RunStore, labels: list[Label]) -> int:
    """Store labels, all or none: each must name a stored run and a judged check in it as
    described, and a person's label of a verdict they labelled already must say the same
    (then it is not stored twice). Returns how many were new; LabelError names every problem."""
    problems: list[tuple[int, str]] = []
    written = 0
    try:
        async with store.db.transaction() as conn, conn.cursor() as cur:
            for i, label in enumerate(labels):
                await cur.execute("SELECT 1 FROM eval_runs WHERE id = %s", (label.run,))
                if await cur.fetchone() is None:
                    problems.append((i, f"no stored run {label.run!r} (deleted, or never"
                                        " stored): its labels cannot be kept"))
                    continue
                await cur.execute(
                    "SELECT result->'attempts'->(%s - 1)->'checks'->(%s - 1) AS c"
                    " FROM eval_cases WHERE run_id = %s AND case_id = %s AND repetition = %s",
                    (label.attempt, label.check, label.run, label.item, label.repetition))
                row = await cur.fetchone()
                check = row["c"] if row else None
                # A judge that was not asked, or gave no readable verdict, has nothing to be
                # agreed with: the queue never offers it, and a label of it is not kept.
                judge = (check or {}).get("judge") or {}
                if not check or check.get("kind") != label.kind or \
                        judge.get("verdict") is None:
                    problems.append((i, f"run {label.run} has no judged check {label.check}"
                                        f" ({label.kind}) in attempt {label.attempt} of"
                                        f" {label.item} repetition {label.repetition}"))
                    continue
                # A label under a pack's rubric is kept only for a verdict that pack's prompt
                # gave, the rubric shown being the one it was given under.
                if label.rubric_pack is not None and not label.under_pack(
                        judge.get("pack") or "", judge.get("prompt_hash") or ""):
                    problems.append((i, f"{label.ref()} was not given under pack"
                                        f" {label.rubric_pack}'s prompt {label.rubric_hash}:"
                                        " a label under that pack's rubric cannot be kept"))
                    continue
                await cur.execute(f"SELECT {_COLUMNS} FROM eval_labels WHERE {_KEY}"
                                  " AND labelled_by = %s", (*label.key, label.by))
                stored = await cur.fetchone()
                if stored is not None:
                    if not Label.model_validate(stored, context=STORED).same_as(label):
                        problems.append((i, f"{label.by} labelled {label.ref()} already, as"
                                            f" {stored['verdict']}; a person labels a verdict"
                                            " once"))
                    continue
                await cur.execute(
                    "INSERT INTO eval_labels (run_id, case_id, repetition, attempt, n, kind,"
                    " verdict, note, labelled_by, labelled_at, rubric_pack, rubric_hash)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, coalesce(%s, now()), %s, %s)",
                    (*label.key, label.kind, label.verdict, label.note, label.by, label.at,
                     label.rubric_pack, label.rubric_hash))
                written += 1
            if problems:
                raise LabelError(problems)  # the transaction is rolled back
    except psycopg.errors.UniqueViolation as exc:  # the same person, at the same moment
        raise LabelError([(0, "that verdict was labelled by the same person meanwhile;"
                              " nothing was written")]) from exc
    return written


async def list_labels(store: RunStore, by: str | None = None) -> list[Label]:
    """Every stored label (or one person's, the name as normalised), in a stable order: by
    verdict, then person."""
    if by is not None:
        by = _normal(by)
    where = " WHERE labelled_by = %s" if by is not None else ""
    rows = await store.db.fetch(
        f"SELECT {_COLUMNS} FROM eval_labels{where}"
        " ORDER BY run_id, case_id, repetition, attempt, n, labelled_by",
        (by,) if by is not None else ())
    return [Label.model_validate(r, context=STORED) for r in rows]


async def labels_of(store: RunStore, ref: VerdictRef) -> list[Label]:
    """Everyone's labels of one verdict."""
    rows = await store.db.fetch(f"SELECT {_COLUMNS} FROM eval_labels WHERE {_KEY}"
                                " ORDER BY labelled_at, labelled_by", ref.key)
    return [Label.model_validate(r, context=STORED) for r in rows]


async def queue(store: RunStore, by: str, runs: int = QUEUE_RUNS) -> list[Judged]:
    """The judged verdicts of the newest stored runs that this person has not labelled,
    newest run first."""
    done = {label.key for label in await list_labels(store, by)}
    found: list[Judged] = []
    for summary in await store.list_runs(runs):
        record = await store.load_run(summary.id)
        found += [j for j in judged_verdicts(record) if j.ref.key not in done]
    return found


@dataclass(frozen=True)
class Offered:
    """What the newest stored runs hold for the queue: judged verdicts, and judged checks whose
    judge was never called (not trusted, and the run had no --advisory-judge): those have no
    verdict to label."""

    verdicts: int
    unasked: int


async def offered(store: RunStore, runs: int = QUEUE_RUNS) -> Offered:
    """Count what the newest stored runs offer to label (what an empty queue is told by)."""
    verdicts = unasked = 0
    for summary in await store.list_runs(runs):
        record = await store.load_run(summary.id)
        verdicts += len(judged_verdicts(record))
        unasked += sum(1 for case in record.cases for attempt in case.attempts
                       for check in attempt.checks
                       if check.judged and check.judge is not None and not check.judge.asked)
    return Offered(verdicts, unasked)


@dataclass
class PeopleSay:
    """What people's labels say per verdict: one verdict where everyone who answered agrees,
    a disagreement where one said pass and another fail; `skip` counts for neither."""

    agreed: dict[Key, Literal["pass", "fail"]] = field(default_factory=dict)
    disagreed: dict[Key, list[Label]] = field(default_factory=dict)
    only_skipped: list[Key] = field(default_factory=list)
    several: int = 0  # verdicts labelled by more than one person


def people_say(labels: list[Label]) -> PeopleSay:
    by_key: dict[Key, list[Label]] = defaultdict(list)
    for label in labels:
        by_key[label.key].append(label)
    said = PeopleSay()
    for key, group in sorted(by_key.items()):
        said.several += len(group) > 1
        answers = {g.verdict for g in group} - {"skip"}
        if not answers:
            said.only_skipped.append(key)
        elif len(answers) > 1:
            said.disagreed[key] = group
        else:
            said.agreed[key] = "pass" if answers == {"pass"} else "fail"
    return said
