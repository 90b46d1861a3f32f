"""A finished run assessed again, its own results never changed: today's checks on its
recorded answers (`rescore`, no model call) and another judge on its recorded replies
(`rejudge`). A stored run gets each stored beside its results as an assessment."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from app.chat.models import model_id_for
from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings
from evals.api.budget import budget
from evals.api.errors import ApiError
from evals.api.options import JudgeChoice
from evals.api.setup import (
    app_settings,
    calibrate_new_judge,
    in_store,
    open_store,
    run_closing,
    start_models,
)
from evals.calibration.rejudge import Rejudging
from evals.calibration.rejudge import rejudge as rejudge_run
from evals.checks import CHECKS
from evals.execute.cache import CacheUse, call_cache
from evals.execute.guard import Spend
from evals.judge.setup import JudgeSetup
from evals.load.cases import CaseFileError, load_cases_by_file
from evals.load.items import EvalItem
from evals.load.plan import harness_hash
from evals.load.selection import select_items
from evals.record.artifact import ARTIFACT, ArtifactError, read_run
from evals.record.assessment import AssessedCase, Assessment, save_assessment, unlike_stored
from evals.record.fingerprint import Selection
from evals.record.results import CaseResult
from evals.record.run import RunRecord
from evals.record.store import StoreError, StoreUnavailable, new_run_id
from evals.report.rescore import checked_anything
from evals.report.rescore import rescore as rescore_run
from evals.settings import CASES_DIR, DEFAULT_CONCURRENCY, Policy


@dataclass(frozen=True)
class Rescored:
    """Today's checks on a run's recorded answers, and where the rescore is kept."""

    record: RunRecord
    results: list[CaseResult]
    load_errors: dict[str, list[str]] = field(default_factory=dict)  # per case file
    assessment_id: str | None = None  # stored beside the run's results
    not_stored: str | None = None  # why it is not stored
    store_down: bool = False  # the store did not answer (rather than not holding the run)
    missing: list[str] = field(default_factory=list)  # rescored items the store lacks

    @property
    def checked(self) -> bool:
        """Whether any recorded answer was checked by a loaded case file."""
        return checked_anything(self.results)


def load_run(ref: str | Path | None) -> RunRecord:
    """A run by its artifact's path (default: the last run's), or a stored run's id or
    unique prefix."""
    try:
        if ref is None or isinstance(ref, Path) or _a_path(ref):
            return read_run(Path(ref) if ref else ARTIFACT)
        return in_store(lambda settings: _stored_run(settings, ref))
    except ArtifactError as exc:
        raise ApiError(str(exc)) from exc


def rescore(run: str | Path | None = None, cases: Path | None = None) -> Rescored:
    """Today's checks (the case files under `cases`, default evals/cases/) on a run's recorded
    answers, no model call. A run the store holds gets the rescore stored beside its results
    as a new assessment; its own results are never changed. When no answer was checked (no
    loaded case file checks any), `checked` is false and nothing is stored."""
    record = load_run(run)
    try:
        loaded, load_errors = load_cases_by_file(cases or CASES_DIR)
    except CaseFileError as exc:
        raise ApiError(str(exc)) from exc
    results = run_closing(rescore_run(record, loaded, load_errors))
    if not checked_anything(results):  # nothing to keep: said, never stored
        return Rescored(record, results, load_errors,
                        not_stored=f"nothing was re-checked: none of the {len(results)}"
                        " recorded case(s) has an answer that a loaded case file checks")
    return _keep_rescore(Rescored(record, results, load_errors))


def _a_path(ref: str) -> bool:
    """A run artifact's path rather than a stored run's id: a file, or what names one."""
    return Path(ref).is_file() or ref.endswith(".json") or "/" in ref


def _keep_rescore(done: Rescored) -> Rescored:
    """The rescore stored beside the run's results as an assessment, when the store holds
    the run and the record's answers are the ones it holds (an artifact's are compared with
    the stored run's, case by case)."""
    record = done.record
    if not record.run_id:
        return Rescored(record, done.results, done.load_errors,
                        not_stored="the artifact names no run")
    assessment = Assessment(id=new_run_id(), run_id=record.run_id, kind="rescore",
                            created=dt.datetime.now(dt.UTC).isoformat(),
                            harness=harness_hash(),
                            cases=[AssessedCase.of(r) for r in done.results])

    async def keep(settings: Settings) -> list[str] | str:
        async with open_store(settings) as store:
            unlike = unlike_stored(record, await store.load_run(assessment.run_id))
            if unlike is not None:
                return unlike
            return await save_assessment(store, assessment)

    try:
        missing = run_closing(keep(app_settings()))
    except StoreUnavailable as exc:
        return Rescored(record, done.results, done.load_errors, not_stored=str(exc),
                        store_down=True)
    except StoreError as exc:
        return Rescored(record, done.results, done.load_errors, not_stored=str(exc))
    if isinstance(missing, str):  # not the stored run's answers
        return Rescored(record, done.results, done.load_errors, not_stored=missing)
    return Rescored(record, done.results, done.load_errors, assessment_id=assessment.id,
                    missing=missing)


async def _stored_run(settings: Settings, ref: str) -> RunRecord:
    async with open_store(settings) as store:
        return await store.load_run(ref)


@dataclass(frozen=True)
class Rejudged:
    """Another judge on a stored run's replies: the pairs, and the assessment it stored."""

    record: RunRecord
    result: Rejudging
    missing: list[str] = field(default_factory=list)  # items the store does not hold
    spend: Spend = field(default_factory=Spend)  # what the command spent, calibration included

    @property
    def exit_code(self) -> int:
        """1 when the cost cap kept verdicts from being asked (the rest are stored)."""
        return 1 if self.spend.calls_refused else 0


def rejudge(run: str, judge: JudgeChoice, *, cache: Policy = "reuse",
            concurrency: int | None = None, max_cost: float | None = None,
            allow_unpriced: bool = False) -> Rejudged:
    """A stored run's recorded replies judged again by `judge` (calibrated first when it has
    no record, as a run's judge is), stored as a new assessment beside the run's own verdicts,
    which never change. Every judge call, the calibration's too, stays under `max_cost` (USD);
    a judge with no known price is refused under it before any call, unless
    `allow_unpriced`."""
    record = in_store(lambda settings: _stored_run(settings, run))
    items = judged_items(record)
    settings = app_settings()
    spend = budget(max_cost, [("judge", model_id_for(settings, "judge", judge.model))],
                   allow_unpriced=allow_unpriced)
    local = uses_local_model(settings, judge.model, "judge")
    concurrency = concurrency or (settings.local_model_parallel if local
                                  else DEFAULT_CONCURRENCY)
    try:
        with local_model_settings(settings, local) as settings:
            calibrate_new_judge(settings, items, judge, concurrency, spend)
            return run_closing(_rejudge(settings, record, items, judge, cache, concurrency,
                                        spend))
    except LocalModelError as exc:
        raise ApiError(f"local model: {exc}") from exc
    except StoreError as exc:
        raise ApiError(str(exc)) from exc


def judged_items(record: RunRecord) -> list[EvalItem]:
    """Today's items that the run judged (loaded as the run selected them, so a scenario's
    visitor styles are the run's)."""
    judged = {c.id for c in record.cases for a in c.attempts for check in a.checks
              if check.judged}
    if not judged:
        raise ApiError(f"run {record.run_id} holds no judged verdict to judge again")
    if record.plan is None:
        raise ApiError(f"run {record.run_id} records no plan: what its judge was asked cannot"
                       " be told")
    sel = record.plan.selection or Selection()
    try:
        loaded = select_items(Selection(file=sel.file, only=sel.only, full=sel.full))
    except CaseFileError as exc:
        raise ApiError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    items = [i for i in loaded if i.id in judged]
    if not items:
        raise ApiError(f"none of the {len(judged)} judged item(s) of run {record.run_id} is in"
                       " the case files any more: nothing to judge again")
    return items


def asked_anything(judge: JudgeSetup, items: list[EvalItem]) -> bool:
    """Whether the judge is called for any of these items' verdicts (a pack's prompt rates a
    case's rubric under the pack's trust; a scenario's criteria keep the base prompt's)."""
    kinds = {s.kind for i in items for s in i.checks if CHECKS[s.kind].needs_judge}
    return ("rubric" in kinds and judge.asked(judge.pack is not None)) or \
        ("criterion" in kinds and judge.asked(False))


async def _rejudge(settings: Settings, record: RunRecord, items: list[EvalItem],
                   choice: JudgeChoice, policy: Policy, concurrency: int,
                   spend: Spend) -> Rejudged:
    _, judge = start_models(settings, items, choice)
    assert judge is not None  # the items are judged ones
    if not asked_anything(judge, items):
        raise ApiError(f"{judge.model.model_id} has not earned trust, so it is not called and"
                       " would judge nothing again; --advisory-judge asks it anyway (its"
                       " verdicts advisory), --trust-judge lets them decide; nothing was"
                       " stored")
    same = {(c.judge.model, c.judge.prompt_hash) for case in record.cases
            for a in case.attempts for c in a.checks if c.judged and c.judge is not None}
    if same == {(judge.model.model_id, judge.prompt_hash)} and policy == "reuse":
        print(f"note: {judge.model.model_id} under prompt {judge.prompt_hash} is the run's own"
              " judge: verdicts it gave are replayed from the call cache (--cache refresh"
              " asks it again)")
    async with open_store(settings) as store:
        calls = call_cache(store.db, policy)
        try:
            result = await rejudge_run(record, items, judge, assessment_id=new_run_id(),
                                       cache=CacheUse(calls, policy), concurrency=concurrency,
                                       spend=spend)
        finally:
            if calls is not None:
                await calls.close()
        if not result.pairs:
            raise ApiError("no verdict of run " + str(record.run_id) + " can be judged again,"
                           " so nothing was stored:\n" + "\n".join(
                               f"  {left.id} #{left.repetition}: {left.reason}"
                               for left in result.assessment.left_out))
        missing = await save_assessment(store, result.assessment)
    return Rejudged(record, result, missing, spend)
