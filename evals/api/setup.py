"""The models an operation starts and the store it opens: the app's settings for an eval, the
chat models asked for, the run's judge (one with no calibration record calibrated first), the
embedded model when any of them is it, and the run store."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from app.chat.models import ChatModel, ModelCallError, model_for_job, model_id_for
from app.chat.openai_wire import close_clients
from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings, get_settings
from evals.api.budget import Called, budget, guarded
from evals.api.errors import ApiError
from evals.api.options import JudgeChoice, RunOptions
from evals.calibration.auto import calibrate_first, prompts_asked, unrecorded
from evals.calibration.calibrate import CalibrationError
from evals.calibration.sets import load_set
from evals.execute.guard import Spend
from evals.judge import MAKERSPACE
from evals.judge.questions import QUESTIONS
from evals.judge.setup import JudgeSetup, prompt_hash_for, question_trusts
from evals.judge.trust import JUDGES_FILE, JudgesFileError, pack_labels_needed, trust
from evals.judge.visitor import VISITOR_QUESTIONS
from evals.load.cases import CaseFileError, load_cases
from evals.load.items import EvalItem
from evals.load.packs import PackError, load_pack_prompt
from evals.load.selection import has_conversations
from evals.record.store import RunStore, StoreError
from evals.settings import DEFAULT_CONCURRENCY, conninfo

T = TypeVar("T")
# Settings that would point the app at live data: the evals blank them and say so.
LIVE_DATA_SETTINGS = ("catalog_source", "blob_base_url", "blob_dir")


def app_settings() -> Settings:
    """The app's settings for an eval: the fixture catalogue and manuals, never live data."""
    settings = get_settings()
    blanked = [n.upper() for n in LIVE_DATA_SETTINGS if getattr(settings, n)]
    if blanked:
        print(f"note: {', '.join(blanked)} ignored: evals run on the fixture catalogue and the"
              " fixture manuals only", file=sys.stderr)  # stdout may be YAML or MCP
    return settings.model_copy(update={n: None for n in LIVE_DATA_SETTINGS})


def judge_setup(settings: Settings, items: Sequence[EvalItem], choice: JudgeChoice
                ) -> JudgeSetup | None:
    """The run's judge (None without judged items) and whether its verdicts decide; says
    which on stdout."""
    asks = sorted({q.kind for q in QUESTIONS.values() for i in items for c in i.checks
                   if c.kind == q.check}
                  | ({q.key for q in VISITOR_QUESTIONS.values()}
                     if has_conversations(items) else set()))
    if not any(i.judged for i in items):
        if not asks:
            return None
        # No judged item: a judge is set up only to settle undecided structural verdicts,
        # and only when it has earned trust for a question the run's checks may ask.
        model_id = model_id_for(settings, "judge", choice.model)
        questions = question_trusts(model_id)
        if not choice.trust and not any(questions[k].trusted for k in asks):
            return None
        try:
            model = model_for_job(settings, "judge", choice.model)
        except ModelCallError as exc:  # the embedded judge is started for judged items only
            print(f"judge: {model_id} is not started for questions alone, so undecided"
                  f" structural verdicts stay undecided ({exc})")
            return None
        setup = JudgeSetup(model, trust(model.model_id, MAKERSPACE.hash()), choice.trust,
                           advisory=choice.advisory, questions=questions)
        print(question_line(setup, asks))
        return setup
    model = model_for_job(settings, "judge", choice.model)
    pack = load_pack_prompt(choice.pack) if choice.pack else None
    setup = JudgeSetup(model, trust(model.model_id, MAKERSPACE.hash()), choice.trust, pack,
                       trust(model.model_id, prompt_hash_for(pack), pack=pack.ref)
                       if pack else None, advisory=choice.advisory,
                       questions=question_trusts(model.model_id))
    if asks:
        print(question_line(setup, asks))
    n = sum(i.judged for i in items)
    if pack is not None and setup.pack_trust is not None:
        cases_n = sum(1 for i in items if i.single_turn and i.judged)
        print(f"judge: {cases_n} judged cases rated with pack {pack.ref} ({pack.description}),"
              f" prompt {setup.prompt_hash}, instead of their own rubrics;"
              + (" its verdicts decide" if setup.pack_trust.trusted else
                 " its verdicts decide on --trust-judge only" if setup.forced else
                 " advisory (--advisory-judge; it has no calibration of its own)"
                 if setup.advisory else
                 " not called (it has no calibration of its own; --advisory-judge calls it)")
              + f": {setup.pack_trust.reason}")
    if setup.trust.trusted:
        print(f"judge: {model.model_id} decides {n} judged cases ({setup.trust.reason})")
    elif setup.forced:
        print(f"judge: {model.model_id} decides {n} judged cases on --trust-judge only:"
              f" {setup.trust.reason}")
    elif setup.advisory:
        print(f"judge: {model.model_id} is advisory (--advisory-judge), its {n} judged cases"
              f" stay UNDECIDED: {setup.trust.reason}")
    else:
        rest = " (those the pack does not rate)" if pack is not None else ""
        print(f"judge: {model.model_id} is not trusted, so it is not called for its {n} judged"
              f" cases{rest}: they stay UNDECIDED (--advisory-judge calls it):"
              f" {setup.trust.reason}")
    return setup


def question_line(setup: JudgeSetup, asks: list[str]) -> str:
    """What the run's judge settles of the checks' undecided verdicts, and which of the
    simulated visitor's failures it is asked about, in a line each."""
    lines = []
    for what, keys, yes, no in (
            ("undecided structural verdicts", [k for k in asks if k in QUESTIONS],
             "settled", "not settled"),
            ("the simulated visitor", [k for k in asks if k not in QUESTIONS],
             "asked", "not asked")):
        said = []
        for kind in keys:
            found = setup.settles(kind)
            said.append(f"{kind} {yes if found.trusted else no} ({found.reason})")
        if said:
            lines.append(f"judge: {what}: {'; '.join(said)}")
    return "\n".join(lines)


def calibrate_new_judge(settings: Settings, items: Sequence[EvalItem], choice: JudgeChoice,
                        concurrency: int, spend: Spend | None = None) -> None:
    """Before a run: a judge with no calibration record under the base prompt, which the run
    asks it with, rates the shipped makerspace set, and the record is saved
    (evals/calibration/auto.py); says the figures on stdout. An evaluator pack's prompt with no
    record is not calibrated on it (its labels were given under each case's own rubric): that
    is said, and the pack stays untrusted. A calibration that fails leaves the judge untrusted
    and says why; the run goes on. Called with the embedded model already started if the judge
    is it. Its calls draw on `spend`, the command's budget, under "calibration": a cap it
    reaches leaves the judge uncalibrated (nothing saved), and the run goes on under what is
    left of the cap."""
    if not choice.auto_calibrate or not any(i.judged for i in items):
        return
    try:
        model = model_for_job(settings, "judge", choice.model)
        pack = load_pack_prompt(choice.pack) if choice.pack else None
    except (ModelCallError, PackError):
        return  # start_models says what is wrong, and stops the run
    try:
        todo = unrecorded(model.model_id, prompts_asked(items, pack))
    except JudgesFileError as exc:
        raise ApiError(f"cannot start: {exc}") from exc
    for prompt in (p for p in todo if p is not None):
        print(f"judge: {model.model_id} has no calibration record under pack {prompt.ref}'s"
              f" prompt ({prompt_hash_for(prompt)}), and the makerspace set cannot give it one:"
              " its labels were given under each case's own rubric, not the pack's, so the"
              f" pack stays untrusted ({pack_labels_needed(prompt.ref)})")
    if None not in todo:
        return
    try:
        labelled = load_set(load_cases())
    except (CalibrationError, CaseFileError) as exc:
        print(f"judge: {model.model_id} cannot be calibrated, so it stays untrusted: the"
              f" makerspace set does not load: {exc}")
        return
    print(f"judge: {model.model_id} has no calibration record under its prompt"
          f" ({prompt_hash_for(None)}): calibrating it first on the makerspace set"
          f" ({len(labelled)} labelled replies; --no-auto-calibrate skips this)")
    try:
        record, now = run_closing(calibrate_first(
            guarded(model, spend or Spend(), "calibration", concurrency), labelled,
            concurrency))
    except ModelCallError as exc:
        print(f"judge: calibrating {model.model_id} failed, so it stays untrusted (nothing"
              f" saved; the next run tries again): {exc}")
        return
    agreement = "undefined" if record.agreement is None else f"{record.agreement:.0%}"
    kappa = "undefined" if record.kappa is None else f"{record.kappa:.2f}"
    print(f"judge: calibrated {model.model_id} under its prompt: {record.n} items, agreement"
          f" {agreement}, kappa {kappa}; its verdicts"
          f" {'now decide' if now.trusted else 'do not decide'} ({now.reason});"
          f" saved to {JUDGES_FILE.name}")


def start_models(settings: Settings, items: Sequence[EvalItem], choice: JudgeChoice,
                 *refs: str | None) -> tuple[list[ChatModel], JudgeSetup | None]:
    """The chat models asked for and the run's judge."""
    try:
        models = [model_for_job(settings, "chat", ref) for ref in refs]
        return models, judge_setup(settings, items, choice)
    except (ModelCallError, PackError, JudgesFileError) as exc:
        raise ApiError(f"cannot start: {exc}") from exc


# What a distributed run's driver is told of the embedded model: each worker serves its own
# (evals/execute/cluster/worker.py), and the driver's model objects are never called.
ON_WORKERS = "http://embedded-model-on-each-worker.invalid/v1"


def asked_model(settings: Settings, model: str | None) -> str:
    """How today's chat model is asked for: what a point needs to run it again."""
    return str(model or settings.model_for("chat"))


def called_models(settings: Settings, options: RunOptions, items: Sequence[EvalItem],
                  models: Sequence[str | None]) -> list[Called]:
    """What a run of these items calls, by role, before anything is started: these chat
    models (or the endpoint), the judge of judged items, the visitor of conversations."""
    called = [("chat model", model_id_for(settings, "chat", ref)) for ref in models]
    if options.endpoint is not None:
        called.append(("endpoint", f"openai/{options.endpoint.model}"))
    if any(i.judged for i in items):
        called.append(("judge", model_id_for(settings, "judge", options.judge.model)))
    if has_conversations(items):
        called.append(("visitor", model_id_for(settings, "sim_user")))
    return called


def with_models(options: RunOptions, items: Sequence[EvalItem], models: list[str | None],
                body: Callable[[Settings, RunOptions, Spend], Coroutine[Any, Any, T]]) -> T:
    """Start the embedded model if any of these chat models, the judge or the visitor is it,
    then run; a local model runs one item per server slot unless told otherwise. The body is
    given the command's budget (`options.max_cost`), which a first-use calibration of the
    judge has drawn on already; a model it cannot price under a cap is refused first."""
    settings = app_settings()
    spend = budget(options.max_cost, called_models(settings, options, items, models),
                   allow_unpriced=options.allow_unpriced)
    # Asked before the server starts: once it runs, the settings name its URL, and a model
    # served there no longer counts as the embedded one.
    chat_is_local = any(uses_local_model(settings, m) for m in models)
    local = chat_is_local or (
        any(i.judged for i in items) and uses_local_model(settings, options.judge.model,
                                                          "judge")
    ) or (has_conversations(items) and uses_local_model(settings, None, "sim_user"))
    concurrency = options.concurrency or (
        settings.local_model_parallel if chat_is_local else DEFAULT_CONCURRENCY)
    if options.ray and local:
        # Each worker starts the embedded model on its own node; the driver calls no model.
        settings = settings.model_copy(update={"local_model_url": ON_WORKERS})
        local = False
    try:
        with local_model_settings(settings, local) as settings:
            calibrate_new_judge(settings, items, options.judge, concurrency, spend)
            return run_closing(body(settings, dataclasses.replace(
                options, concurrency=concurrency), spend))
    except LocalModelError as exc:
        raise ApiError(f"local model: {exc}") from exc
    except (StoreError, JudgesFileError) as exc:
        raise ApiError(str(exc)) from exc


def rate_with_judge(judge_model: str | None, what: str,
                    rate: Callable[[ChatModel, int], Coroutine[Any, Any, T]],
                    spend: Spend | None = None) -> tuple[str, T]:
    """Have the judge (the embedded model started if it is the one) rate a set, each of its
    calls drawn on `spend` (the command's budget) under "calibration"."""
    settings = get_settings()
    try:
        with local_model_settings(settings, uses_local_model(settings, judge_model,
                                                             "judge")) as settings:
            model = model_for_job(settings, "judge", judge_model)
            print(f"judge: {model.model_id} · {what}")
            parallel = settings.local_model_parallel
            return model.model_id, run_closing(rate(
                guarded(model, spend or Spend(), "calibration", parallel), parallel))
    except (LocalModelError, ModelCallError) as exc:
        raise ApiError(str(exc)) from exc


async def _closing(body: Coroutine[Any, Any, T]) -> T:
    """Run a command's body, then close the model clients it opened on this loop."""
    try:
        return await body
    finally:
        await close_clients()


def run_closing(body: Coroutine[Any, Any, T]) -> T:
    """asyncio.run for a command: the model clients are closed before the loop ends."""
    return asyncio.run(_closing(body))


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[RunStore]:
    """The run store, on the suite's PostgreSQL."""
    async with RunStore.open(conninfo(settings)) as store:
        yield store


def in_store(body: Callable[[Settings], Coroutine[Any, Any, T]]) -> T:
    """A command's body that needs the run store only; a StoreError stops it (exit 2)."""
    try:
        return run_closing(body(app_settings()))
    except StoreError as exc:
        raise ApiError(str(exc)) from exc
