"""Reassessments of a stored run, typed to the leaves: a rescore (today's checks on the recorded
answers, no model call) or a re-judging (another judge on the recorded replies). Each is kept in
the run store beside the run's own results (eval_assessments, eval_assessment_cases), never
over them: the original results stay as they were stored (store migration 0005), and an
assessment once stored is final too.

A check an assessment gave is named by its place in the stored case: the attempt (1-based) and
its place among that attempt's checks (1-based), as eval_checks and people's labels number
them. A re-judging gives the judged checks it replaced their original places, so the two read
side by side; a rescore's places are those of its own checks.
"""

from __future__ import annotations

import json
from typing import Literal

from psycopg.types.json import Jsonb
from pydantic import BaseModel, ConfigDict, Field

from app.redact import redact
from evals.record.results import CaseResult, CheckResult, Status
from evals.record.run import RunRecord
from evals.record.store import RunStore, StoreError

AssessmentKind = Literal["rescore", "rejudge"]


class AssessedCheck(BaseModel):
    """One check as an assessment gave it, at its place in the stored case."""

    model_config = ConfigDict(extra="forbid")
    attempt: int = Field(ge=1)
    check: int = Field(ge=1)
    result: CheckResult


class AssessedCase(BaseModel):
    """One stored case (an item in one repetition) under an assessment: its status then, and
    the checks the assessment gave."""

    model_config = ConfigDict(extra="forbid")
    id: str
    repetition: int = Field(ge=1)
    status: Status
    checks: list[AssessedCheck] = []
    note: str | None = None  # why it was not checked as the others were (skipped, errored)

    @classmethod
    def of(cls, result: CaseResult) -> AssessedCase:
        """A rescored case: every check of every attempt, at its place."""
        errors = [a.error for a in result.attempts if a.error]
        return cls(id=result.id, repetition=result.repetition, status=result.status,
                   checks=[AssessedCheck(attempt=a, check=n, result=c)
                           for a, attempt in enumerate(result.attempts, start=1)
                           for n, c in enumerate(attempt.checks, start=1)],
                   note=result.skipped_reason or (errors[0] if errors else None))


def judge_named(model: str, prompt_hash: str, pack: str | None) -> str:
    """A judge as a person reads it, a re-judging's or one a run recorded (a JudgeVerdict's)."""
    return f"{model} (prompt {prompt_hash}" + (f", pack {pack}" if pack else "") + ")"


class AssessmentJudge(BaseModel):
    """The judge of a re-judging: its model and prompt (an evaluator pack's, if any), and
    whether its verdicts decide, under the same trust rule as a run's (evals/judge/trust.py)."""

    model_config = ConfigDict(extra="forbid")
    model: str
    prompt_hash: str
    pack: str | None = None
    decides: bool
    trust: str  # the trust rule's reason
    trusted_by_flag: bool = False  # --trust-judge
    advisory: bool = False  # --advisory-judge: asked although it has not earned trust
    calls_made: int = 0
    calls_replayed: int = 0  # from the call cache

    def named(self) -> str:
        """The judge as a person reads it: "openai/gpt-4o (prompt 1a2b…, pack rubric)"."""
        return judge_named(self.model, self.prompt_hash, self.pack)

    def role(self) -> str:
        """What its verdicts are, in words: they decide, on --trust-judge only, advisory, or
        it was not called."""
        if self.decides:
            return "its verdicts decide on --trust-judge only" if self.trusted_by_flag else \
                "its verdicts decide"
        return "advisory (--advisory-judge)" if self.advisory else "not called"


class LeftOut(BaseModel):
    """A case an assessment could not assess, and why."""

    model_config = ConfigDict(extra="forbid")
    id: str
    repetition: int
    reason: str


class Assessment(BaseModel):
    """One reassessment of a stored run."""

    model_config = ConfigDict(extra="forbid")
    id: str
    run_id: str
    kind: AssessmentKind
    created: str  # ISO time, when it was made
    harness: str  # the hash of the checks' code it assessed with (as a plan records it)
    judge: AssessmentJudge | None = None  # a re-judging's
    left_out: list[LeftOut] = []
    cases: list[AssessedCase] = []


def unlike_stored(record: RunRecord, stored: RunRecord) -> str | None:
    """Why a run's record (an artifact's) is not the stored run's evidence, or None: its models,
    or any case the store holds under another result (answers, checks, status), differ. An
    assessment is of the answers the store holds, never of an artifact's own: a file that
    names a stored run and holds other answers is rescored, not kept as that run's. A case the
    store does not hold is no difference (it is left out of what is stored)."""
    where = f"run {stored.run_id} as the store holds it"
    if record.models != stored.models:
        return f"the artifact's models differ from {where}"
    held = {(c.id, c.repetition): c for c in stored.cases}
    differ = [f"{c.id}#{c.repetition}" for c in record.cases
              if (c.id, c.repetition) in held and held[(c.id, c.repetition)] != c]
    if differ:
        return (f"{len(differ)} case(s) of the artifact differ from {where}"
                f" ({', '.join(differ[:5])}{', …' if len(differ) > 5 else ''}); a rescore is"
                " stored only of the answers the store holds")
    return None


def _jsonb(model: BaseModel, exclude: set[str] | None = None) -> Jsonb:
    """A record as JSON, with every secret-looking value redacted (as the run store does)."""
    return Jsonb(json.loads(redact(model.model_dump_json(exclude=exclude))))


async def save_assessment(store: RunStore, assessment: Assessment) -> list[str]:
    """Store an assessment beside its run's results, whole and in one transaction. A case the
    store does not hold (a run the store missed in part: `runs --import` puts it there) cannot
    be stored with it: those are returned as "id#repetition" and left out of what is stored.
    StoreError when the run is not stored at all."""
    async with store.db.transaction() as conn, conn.cursor() as cur:
        await cur.execute("SELECT 1 FROM eval_runs WHERE id = %s", (assessment.run_id,))
        if await cur.fetchone() is None:
            raise StoreError(f"no stored run {assessment.run_id!r}: an assessment is stored"
                             " beside a stored run (python -m evals runs --import ARTIFACT)")
        await cur.execute("SELECT case_id, repetition FROM eval_cases WHERE run_id = %s",
                          (assessment.run_id,))
        held = {(r["case_id"], r["repetition"]) for r in await cur.fetchall()}
        kept = [c for c in assessment.cases if (c.id, c.repetition) in held]
        await cur.execute(
            "INSERT INTO eval_assessments (id, run_id, kind, header) VALUES (%s, %s, %s, %s)",
            (assessment.id, assessment.run_id, assessment.kind,
             _jsonb(assessment, exclude={"cases"})))
        if kept:
            await cur.executemany(
                "INSERT INTO eval_assessment_cases (assessment_id, run_id, case_id, repetition,"
                " status, result) VALUES (%s, %s, %s, %s, %s, %s)",
                [(assessment.id, assessment.run_id, c.id, c.repetition, c.status, _jsonb(c))
                 for c in kept])
    return [f"{c.id}#{c.repetition}" for c in assessment.cases
            if (c.id, c.repetition) not in held]


async def load_assessment(store: RunStore, assessment_id: str) -> Assessment:
    """One stored assessment with its cases, in the run's order of them (by id, then
    repetition)."""
    head = await store.db.fetchone("SELECT header FROM eval_assessments WHERE id = %s",
                                   (assessment_id,))
    if head is None:
        raise StoreError(f"no stored assessment {assessment_id!r}")
    rows = await store.db.fetch(
        "SELECT result FROM eval_assessment_cases WHERE assessment_id = %s"
        " ORDER BY case_id, repetition", (assessment_id,))
    return Assessment.model_validate({**head["header"],
                                      "cases": [r["result"] for r in rows]})


async def assessments_of(store: RunStore, run_id: str) -> list[Assessment]:
    """Every stored assessment of a run, oldest first."""
    rows = await store.db.fetch("SELECT id FROM eval_assessments WHERE run_id = %s"
                                " ORDER BY created_at, id", (run_id,))
    return [await load_assessment(store, str(r["id"])) for r in rows]
