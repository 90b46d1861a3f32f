"""The judge measured against people: on the team's labelled replies (`makerspace`), on
MRBench's tutor replies per dimension (`mrbench`), and on the narrow questions that settle
undecided structural verdicts (`questions`). With `save`, each measurement becomes the trust
record the judge is held to (judges.yaml)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.chat.models import ChatModel, model_id_for
from app.settings import get_settings
from evals.api.budget import budget, capped_line
from evals.api.errors import ApiError
from evals.api.setup import rate_with_judge
from evals.calibration.accuracy import LabelledItem
from evals.calibration.calibrate import Calibration, CalibrationError, Rated, calibrate
from evals.calibration.mrbench import DIMENSIONS
from evals.calibration.mrbench import load_items as load_mrbench_items
from evals.calibration.mrbench import rate as rate_mrbench
from evals.calibration.mrbench import report as mrbench_report
from evals.calibration.questions import QUESTION_SET, labelled_for, rate_questions
from evals.calibration.sets import load_set, rate
from evals.calibration.visitor_set import VisitorSetError, load_transcripts, rate_visitor
from evals.execute.guard import Spend
from evals.judge import TUTORING
from evals.judge.questions import QUESTIONS, Question
from evals.judge.setup import prompt_hash_for
from evals.judge.trust import JudgeRecord, Trust, save_record, today, trust
from evals.judge.visitor import VISITOR_QUESTIONS, VISITOR_SET, VisitorQuestion
from evals.load.cases import CaseFileError, load_cases

Set = Literal["makerspace", "mrbench", "questions", "visitor"]


@dataclass(frozen=True)
class Measured:
    """One measurement of the judge: under which prompt, on which set, and its figures."""

    name: str  # the set, or its part (an MRBench dimension, a question kind)
    set: str  # the set's name as its trust record names it
    prompt_hash: str
    result: Calibration
    saved: Trust | None = None  # the trust it earned, when saved


@dataclass(frozen=True)
class Calibrated:
    """The judge's measurements on one set."""

    judge: str  # the judge model's id
    measured: list[Measured] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)  # what its judge calls cost


def calibrate_judge(set: Set = "makerspace", *, judge_model: str | None = None,
                    file: Path | None = None, limit: int | None = None,
                    question: str | None = None, save: bool = False,
                    on_measured: Callable[[str, Measured], None] | None = None,
                    max_cost: float | None = None, allow_unpriced: bool = False
                    ) -> Calibrated:
    """The judge (`judge_model`, default the judge job's model; the embedded model started if
    it is the one) against people's verdicts on `set`. mrbench reads `file` (MRBench V2's
    JSON), at most `limit` dialogues (default 30); questions asks every question kind, or
    `question`, about at most `limit` labelled answers each; visitor asks every simulated
    visitor failure kind's question, or `question`'s, about at most `limit` labelled
    transcripts each. With `save`, each figure is
    saved as the judge's trust record for that prompt and set, and `on_measured` is told of
    it (with the judge's id), each as soon as it is measured: a later part that fails loses
    nothing measured before it. Every judge call stays under `max_cost` (USD): a judge with no
    known price is refused under it before any call, unless `allow_unpriced`; a measurement
    the cap cut short is not saved, and the calibration stops there (ApiError)."""
    if limit is not None and limit < 1:
        raise ApiError("--limit must be at least 1")
    spend = judge_budget(judge_model, max_cost, allow_unpriced)

    def kept(judge: str, m: Measured) -> Measured:
        if spend.calls_refused:  # measured on fewer items than asked: no record of it
            raise ApiError(f"{capped_line(spend)}: {m.name} was rated on only part of its"
                           " set, so nothing of it is saved or shown")
        if save:
            m = Measured(m.name, m.set, m.prompt_hash, m.result,
                         save_trust(judge, m.prompt_hash, m.set, m.result))
        if on_measured is not None:
            on_measured(judge, m)
        return m

    try:
        if set == "makerspace":
            done = _makerspace(judge_model, spend)
        elif set == "mrbench":
            if file is None:
                raise ApiError("--set mrbench needs --file PATH (the MRBench V2 JSON)")
            done = _mrbench(judge_model, file, 30 if limit is None else limit, spend)
        elif set == "visitor":
            return _visitor(judge_model, question, limit, kept, spend)
        else:
            return _questions(judge_model, question, limit, kept, spend)
    except (CalibrationError, CaseFileError) as exc:
        raise ApiError(str(exc)) from exc
    return Calibrated(done.judge, [kept(done.judge, m) for m in done.measured], spend)


def judge_budget(judge_model: str | None, max_cost: float | None,
                 allow_unpriced: bool) -> Spend:
    """A judge-only command's budget (calibrate): the judge priced before any call."""
    return budget(max_cost, [("judge", model_id_for(get_settings(), "judge", judge_model))],
                  allow_unpriced=allow_unpriced)


def save_trust(model: str, prompt_hash: str, set_name: str, result: Calibration,
               pack: str | None = None) -> Trust:
    """Record a measurement as the judge's trust record (judges.yaml), and what it earns."""
    save_record(JudgeRecord(model=model, prompt_hash=prompt_hash, set=set_name, n=result.rated,
                            agreement=result.agreement, kappa=result.kappa, date=today(),
                            pack=pack))
    return trust(model, prompt_hash, pack=pack)


def _makerspace(judge_model: str | None, spend: Spend) -> Calibrated:
    items = load_set(load_cases())
    model_id, (verdicts, labels) = rate_with_judge(
        judge_model,
        f"{len(items)} labelled replies to {len({i.case.id for i in items})} judged cases",
        lambda model, parallel: rate(items, model, parallel), spend)
    return Calibrated(model_id, [Measured("makerspace", "makerspace", prompt_hash_for(None),
                                          calibrate(verdicts, labels))])


def _mrbench(judge_model: str | None, file: Path, limit: int, spend: Spend) -> Calibrated:
    items = load_mrbench_items(file, limit)
    model_id, ratings = rate_with_judge(
        judge_model, f"{len(items)} tutor replies × {len(DIMENSIONS)} dimensions",
        lambda model, parallel: rate_mrbench(items, DIMENSIONS, model, parallel), spend)
    return Calibrated(model_id, [Measured(name, f"mrbench:{name}", TUTORING.hash(), c)
                                 for name, c in mrbench_report(ratings).items()])


def asked_kinds(kind: str | None, known: list[str], flag: str) -> list[str]:
    """The question kinds a calibration asks: all of them (`None` or "all"), or the one named,
    which must be one of them."""
    if kind in (None, "all"):
        return known
    if kind not in known:
        raise ApiError(f"{flag}: unknown kind {kind!r}; known: all, {', '.join(known)}")
    return [str(kind)]


def _questions(judge_model: str | None, kind: str | None, limit: int | None,
               kept: Callable[[str, Measured], Measured], spend: Spend) -> Calibrated:
    kinds = asked_kinds(kind, list(QUESTIONS), "--questions")
    model_id, measured = None, []
    for name in kinds:
        question = QUESTIONS[name]
        items = labelled_for(question, limit)

        def asking(model: ChatModel, parallel: int, q: Question = question,
                   i: list[tuple[str, LabelledItem]] = items
                   ) -> Coroutine[Any, Any, tuple[list[Rated], dict[str, str]]]:
            return rate_questions(q, i, model, parallel)

        model_id, (rated, labels) = rate_with_judge(
            judge_model, f"{name} questions about {len(items)} labelled answers of"
                         f" {question.check}", asking, spend)
        measured.append(kept(model_id, Measured(name, QUESTION_SET, question.hash(),
                                                calibrate(rated, labels))))
    return Calibrated(str(model_id), measured, spend)


def _visitor(judge_model: str | None, kind: str | None, limit: int | None,
             kept: Callable[[str, Measured], Measured], spend: Spend) -> Calibrated:
    kinds = asked_kinds(kind, list(VISITOR_QUESTIONS), "--visitor")
    try:
        transcripts = load_transcripts()[:limit]
    except VisitorSetError as exc:
        raise ApiError(str(exc)) from exc
    model_id, measured = None, []
    for name in kinds:
        question = VISITOR_QUESTIONS[name]

        def asking(model: ChatModel, parallel: int, q: VisitorQuestion = question
                   ) -> Coroutine[Any, Any, tuple[list[Rated], dict[str, str]]]:
            return rate_visitor(q, transcripts, model, parallel)

        model_id, (rated, labels) = rate_with_judge(
            judge_model, f"visitor {name} questions about {len(transcripts)} labelled"
                         " transcripts", asking, spend)
        measured.append(kept(model_id, Measured(f"visitor_{name}", VISITOR_SET,
                                                question.hash(), calibrate(rated, labels))))
    return Calibrated(str(model_id), measured, spend)
