"""Running the suite: a run of today's agent, stored as it goes (`run`), what an interrupted
run left, into that run (`resume`), and the items a stored run did not pass, as a new run
(`rerun_failed`). Each returns the run's record and how the run ended."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.chat.models import ChatModel, model_for_job
from app.chat.openai_wire import OpenAICompatModel
from app.settings import Settings
from evals.api.budget import Called, budget
from evals.api.errors import ApiError
from evals.api.options import Endpoint, RunOptions
from evals.api.progress import progress_bar, received, stop_on_signals
from evals.api.setup import (
    ON_WORKERS,
    asked_model,
    start_models,
    with_models,
)
from evals.execute.agent import agent_settings
from evals.execute.cluster import ClusterError, ClusterPlan, check_address, cluster_runner
from evals.execute.conversation import visitor_prompt_hash
from evals.execute.endpoint import skip_reason
from evals.execute.guard import Spend
from evals.execute.retries import MAX_ATTEMPTS
from evals.execute.runner import run_variants
from evals.execute.session import AgentChanged, Controls, Version, prepared, run_versions
from evals.judge.questions import QUESTIONS
from evals.judge.setup import JudgeSetup
from evals.judge.visitor import VISITOR_QUESTIONS
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.plan import plan_info
from evals.load.selection import has_conversations, select_items
from evals.record.artifact import write_run
from evals.record.fingerprint import FrozenContext, PlanInfo, Selection, VisitorPlan, digest
from evals.record.repetitions import RepeatRule
from evals.record.results import CaseResult
from evals.record.run import Models, RunRecord, RunSettings
from evals.report.console import exit_code
from evals.report.impact import run_summary
from evals.report.junit import write_junit
from evals.settings import conninfo, eval_settings


@dataclass(frozen=True)
class RunResult:
    """A run that ended (finished, capped or stopped): its record and how it ended."""

    record: RunRecord
    artifact: Path  # where its JSON record was written
    fail_on_skip: bool = False  # a skipped item fails the run
    store_failed: str | None = None  # why not every finished item is in the run store
    signal: int | None = None  # the signal that stopped it (2: Ctrl-C, 15: SIGTERM)
    junit: Path | None = None  # the JUnit XML written, when asked for

    @property
    def capped(self) -> list[CaseResult]:
        """The items the cost cap left unrun."""
        return self.record.capped

    @property
    def exit_code(self) -> int:
        """0 when every item passed (and, with fail_on_skip, none was skipped) and every
        finished item is stored; 128 + the signal when one stopped it; else 1."""
        if self.record.status == "interrupted":
            return 128 + self.signal if self.signal else 1
        code = exit_code(self.record.cases, fail_on_skip=self.fail_on_skip) or \
            (1 if self.store_failed else 0)
        return code or (1 if self.capped else 0)


def select(selection: Selection) -> list[EvalItem]:
    """Today's items as a selection names them: cases and scenario conversations alike."""
    try:
        items = select_items(selection)
    except CaseFileError as exc:
        raise ApiError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not items:
        raise ApiError("nothing selected to run")
    return items


def run(options: RunOptions | None = None, *, progress: bool = True) -> RunResult:
    """One run of today's agent on the selected items, stored as it goes, its record written
    to `options.artifact` (and JUnit XML to `options.junit`). Starts the embedded model when a
    model of the run is it; says what it does on stdout, and its progress on stderr."""
    options = options or RunOptions()
    if options.endpoint is not None:
        return run_endpoint(options, progress=progress)
    items = select(options.selection)
    return with_models(options, items, [options.model], lambda settings, opts, spend: run_once(
        items, opts, settings, progress=progress, spend=spend))


def run_endpoint(options: RunOptions, *, progress: bool = True) -> RunResult:
    """A run whose cases go to `options.endpoint` directly, nothing composed: stored, cached,
    repeated and capped as any run. Scenarios need the app (its tools, a visitor), and so do
    cases with an app context or checks that read what an endpoint hides: those are SKIPPED
    with the reason (evals/execute/endpoint.py)."""
    if options.ray is not None:
        raise ApiError("--ray: an endpoint run is not spread over a cluster (its workers run"
                       " the app's path); leave --ray out")
    if options.model is not None:
        raise ApiError("--model: an endpoint run sends its cases to --endpoint-model; leave"
                       " --model out")
    if options.selection.only == "scenarios":
        raise ApiError("--scenarios-only: scenarios need the app (its tools, a simulated"
                       " visitor); an endpoint is sent cases only")
    options = dataclasses.replace(
        options, selection=options.selection.model_copy(update={"only": "cases"}))
    items = select(options.selection)
    return with_models(options, items, [], lambda settings, opts, spend: run_once(
        items, opts, settings, progress=progress, spend=spend))


def endpoint_model(endpoint: Endpoint, settings: Settings) -> ChatModel:
    """The endpoint as a model, its key from EVAL_ENDPOINT_API_KEY."""
    key = eval_settings().endpoint_api_key
    return OpenAICompatModel(f"openai/{endpoint.model}", api_base=endpoint.url,
                             api_key=key.get_secret_value() if key else "none",
                             timeout_s=settings.model_timeout_s,
                             retries=settings.model_retries)


def plan_for(items: Sequence[EvalItem], judge: JudgeSetup | None, repeat: int,
             selection: Selection | None, rule: RepeatRule | None = None,
             visitor: ChatModel | None = None) -> PlanInfo:
    """The plan of these items: `visitor` is the simulated visitor of their conversations."""
    return plan_info(items, judge_model=judge.model.model_id if judge else None,
                     judge_prompt_hash=judge.prompt_hash if judge else None, repeat=repeat,
                     selection=selection, repeat_rule=rule,
                     judge_pack=judge.pack.ref if judge and judge.pack else None,
                     visitor=VisitorPlan(model=visitor.model_id,
                                         prompt_hash=visitor_prompt_hash(),
                                         settings=visitor_settings(visitor))
                     if visitor is not None and has_conversations(items) else None,
                     settling=settled_questions(judge, items))


def settled_questions(judge: JudgeSetup | None, items: Sequence[EvalItem]) -> dict[str, str]:
    """The narrow questions this judge settles the items' undecided checks with, and the
    simulated visitor's questions it answers about their conversations."""
    if judge is None:
        return {}
    kinds = {c.kind for i in items for c in i.checks}
    talks = has_conversations(items)
    return {**{q.kind: q.hash() for q in QUESTIONS.values()
               if q.check in kinds and judge.settles(q.kind).trusted},
            **{q.key: q.hash() for q in VISITOR_QUESTIONS.values()
               if talks and judge.settles(q.key).trusted}}


def visitor_settings(visitor: ChatModel) -> str:
    """A hash of what decides the visitor's replies besides its model id (listed apart) and
    its instructions: its transport's identity (endpoint, temperature, token cap, a local
    model file), which holds no key."""
    return digest({k: v for k, v in visitor.identity().items() if k != "model"})


def visitor_for(settings: Settings, items: Sequence[EvalItem]) -> ChatModel | None:
    """The simulated visitor (the sim_user job) when the items hold conversations."""
    return model_for_job(settings, "sim_user") if has_conversations(items) else None


def print_start(model_id: str, items: Sequence[EvalItem], repeat: int, settings: Settings,
                rule: RepeatRule | None = None, steps: Sequence[int] = ()) -> None:
    """What the run will ask, and its bounds in model calls; `steps`, each version's tool
    rounds per turn (a frozen agent's are its own; default: one version, today's)."""
    steps = steps or [settings.max_tool_steps]
    versions = len(steps)
    conversations = [i for i in items if not i.single_turn]
    turns = sum(c.max_turns for c in conversations)
    singles = len(items) - len(conversations)
    calls_max = (singles + turns) * repeat * sum(s + 1 for s in steps) * MAX_ATTEMPTS
    what = f"{singles} cases" + (f" + {len(conversations)} scenario conversations (at most"
                                 f" {turns} visitor turns)" if conversations else "")
    print(f"model: {model_id} · {what} × "
          + (f"{rule.describe()} repetitions" if rule else f"{repeat} repetition(s)")
          + (f" × {versions} versions" if versions > 1 else "")
          + f" · at least {singles * (1 if rule else repeat) * versions} model calls, at most"
            f" {calls_max}"
          " (every turn, tool step and retry; the visitor's and judge's calls apart)")


def cost_controls(cap: float | None, called: list[Called], *, allow_unpriced: bool = False,
                  spend: Spend | None = None) -> Controls:
    """The run's stop and budget: `spend` (the command's, which a calibration may have drawn
    on) or a new one of `cap`. Every model the run calls counts toward the cap (the chat
    model, the judge, the simulated visitor), so each must have a known price, unless
    `allow_unpriced` (evals/api/budget.py)."""
    known = spend.unpriced if spend is not None else set()
    checked = budget(cap, [c for c in called if c[1] not in known],
                     allow_unpriced=allow_unpriced)
    if spend is None:
        return Controls(spend=checked)
    spend.unpriced |= checked.unpriced
    return Controls(spend=spend)


def run_controls(options: RunOptions, spend: Spend, chat: Sequence[ChatModel],
                 judge: JudgeSetup | None, visitor: ChatModel | None) -> Controls:
    """A run's stop and the command's budget, every model it calls checked for a price under a
    cap (the judge may be one set up for the checks' questions alone)."""
    called = [("chat model", m.model_id) for m in chat]
    called += [("judge", judge.model.model_id)] if judge else []
    called += [("visitor", visitor.model_id)] if visitor else []
    return cost_controls(options.max_cost, called, allow_unpriced=options.allow_unpriced,
                         spend=spend)


def run_settings(options: RunOptions, judge: JudgeSetup | None, visitor: ChatModel | None,
                 **more: Any) -> tuple[RunSettings, Models]:
    """The run record's settings and models for this run (the chat model is each version's)."""
    pack = judge.pack if judge is not None else None
    return (RunSettings(concurrency=options.concurrency, launch=eval_settings().launch,
                        judge_pack=pack.ref if pack else None,
                        judge_prompt_hash=judge.prompt_hash if pack and judge else None,
                        advisory_judge=bool(judge and judge.advisory), **more),
            Models(judge=judge.model.model_id if judge else None,
                   visitor=visitor.model_id if visitor else None))


async def run_once(items: list[EvalItem], options: RunOptions, settings: Settings, *,
                   resume: RunRecord | None = None, rerun_of: str | None = None,
                   progress: bool = True, spend: Spend | None = None) -> RunResult:
    """One run of today's agent (or the rest of `resume`), stored as it goes, its model calls
    drawn on `spend` (the command's budget; default a new one of `options.max_cost`)."""
    endpoint = options.endpoint
    if endpoint is None:
        (model,), judge = start_models(settings, items, options.judge, options.model)
        version = Version("current", model, ref=asked_model(settings, options.model))
    else:
        _, judge = start_models(settings, items, options.judge)
        model = endpoint_model(endpoint, settings)
        version = Version("current", model, ref=f"{endpoint.model} at {endpoint.url}",
                          executor="endpoint", skip=skip_reason)
    visitor = visitor_for(settings, items)
    controls = run_controls(options, spend or Spend(options.max_cost), [model], judge, visitor)
    plan = plan_for(items, judge, options.repeat, options.selection, options.rule, visitor)
    if resume is not None:
        if resume.plan is None or resume.plan.fingerprint != plan.fingerprint:
            changes = plan.changes_since(resume.plan) if resume.plan else []
            raise ApiError("\n".join([f"run {resume.run_id} ran another plan; it cannot be"
                                      " resumed under this one:",
                                      *(f"  {line}" for line in changes)]))
        plan = resume.plan
    # The artifact says at once that a run is under way: an old one never looks current. A
    # resumed run's artifact is rebuilt from the store at once, with the cases it holds.
    write_run(resume.model_copy(update={"status": "running"}) if resume is not None else
              RunRecord(status="running", started=dt.datetime.now(dt.UTC).isoformat()),
              options.artifact)
    todo = len(items) * options.repeat - (len(resume.cases) if resume else 0)
    print_start(model.model_id, items, options.repeat, settings, rule=options.rule)
    tick = progress_bar(todo) if progress else None  # with an auto rule, at most this many
    run, models = run_settings(options, judge, visitor, pid=os.getpid(), rerun_of=rerun_of)
    if endpoint is not None:
        models = models.model_copy(update={"endpoint": f"{endpoint.model} at {endpoint.url}"})
    async with prepared(settings, app=endpoint is None) as prep:

        async def say_impact(contexts: dict[str, FrozenContext]) -> None:
            print(await run_summary(prep.store, contexts, items, plan, model.model_id,
                                    agent_settings(settings), options.cache))

        with stop_on_signals(controls.stop) as got:
            try:
                records = await run_versions(
                    prep, items, [version], plan, settings=run, models=models,
                    vision=options.vision, judge=judge, visitor=visitor, progress=tick,
                    controls=controls, resume=resume,
                    artifact=options.artifact, cache=options.cache,
                    # an endpoint is sent no composed request: nothing for the impact to say
                    on_composed=None if resume or endpoint else say_impact,
                    execute=cluster_runner(cluster_plan(options, settings)) if options.ray
                    else run_variants)
            except AgentChanged as exc:  # refused before anything ran: as the store has it
                if resume is not None:
                    write_run(resume, options.artifact)
                raise ApiError(str(exc)) from exc
        store_failed = prep.store_failed
    if tick is not None:
        tick(None)
    record = records["current"]
    write_run(record, options.artifact)
    return RunResult(record=record, artifact=options.artifact,
                     fail_on_skip=options.fails_on_skip, store_failed=store_failed,
                     signal=received(got),
                     junit=write_junit(record, options.junit) if options.junit else None)


def cluster_plan(options: RunOptions, settings: Settings) -> ClusterPlan:
    """Where a `--ray` run goes: its workers ask for the models as this run did, and start
    the embedded model on their own nodes when the run uses it."""
    assert options.ray is not None
    try:
        address = check_address(options.ray)
    except ClusterError as exc:
        raise ApiError(str(exc)) from exc
    local = settings.local_model_url == ON_WORKERS
    return ClusterPlan(
        address=address,
        settings=settings.model_copy(update={"local_model_url": None}) if local else settings,
        local_model=local, server=conninfo(settings), refs={"current": options.model},
        judge_ref=options.judge.model)
