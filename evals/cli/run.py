"""The commands that run the suite and keep what they ran: run (the default), resume, runs,
list, needs-local-model."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from app.chat.model_info import price_per_token
from app.chat.models import PREFIX_CACHES, ChatModel, model_for_job
from app.localmodel import uses_local_model
from app.settings import Settings, get_settings
from evals.cli.common import (
    ON_WORKERS,
    CliError,
    Commands,
    JudgeChoice,
    RunOptions,
    add_item_flags,
    add_ray_flag,
    add_run_flags,
    asked_model,
    exit_for,
    in_store,
    open_store,
    positive,
    progress_bar,
    repetitions,
    run_options,
    start_models,
    stop_on_signals,
    with_models,
)
from evals.cli.endpoint import run_endpoint_command
from evals.cli.suites import SUITES, run_suite
from evals.execute.agent import agent_settings, as_recorded
from evals.execute.cache import identity
from evals.execute.cluster import ClusterError, ClusterPlan, check_address, cluster_runner
from evals.execute.conversation import visitor_prompt_hash
from evals.execute.runner import MAX_ATTEMPTS, run_variants
from evals.execute.session import AgentChanged, Controls, Version, prepared, run_versions
from evals.judge.questions import QUESTIONS
from evals.judge.setup import JudgeSetup
from evals.load.cases import CaseFileError, load_cases
from evals.load.conversations import Conversation
from evals.load.items import EvalItem
from evals.load.plan import plan_info
from evals.load.selection import has_conversations, select_items
from evals.record.artifact import ArtifactError, read_run, write_run
from evals.record.fingerprint import (
    FrozenContext,
    PlanInfo,
    Selection,
    VisitorPlan,
    digest,
)
from evals.record.repetitions import RepeatRule
from evals.record.run import Models, RunRecord, RunSettings
from evals.record.store import RunLocked
from evals.report.attacks import attack_lines
from evals.report.console import (
    conversation_lines,
    cost_lines,
    cut_lines,
    exit_code,
    print_report,
    replay_lines,
)
from evals.report.impact import run_summary
from evals.report.junit import write_junit
from evals.report.stats import stats_lines
from evals.settings import conninfo, eval_settings


def register(sub: Commands) -> None:
    env = eval_settings()
    run = sub.add_parser("run", help="run the suite (the default)")
    run.add_argument("case_file", nargs="?", type=Path,
                     help="a case file or folder to run instead of evals/cases/")
    run.add_argument("--endpoint", help="an OpenAI-compatible base URL: send each case there"
                     " directly (no app composition)")
    run.add_argument("--endpoint-model", help="the model id the endpoint serves")
    run.add_argument("--suite", choices=SUITES,
                     help="run a public set instead of the cases, against --endpoint: mrbench"
                          " judges the tutor's reply to each MRBench dialogue on MRBench's"
                          " dimensions; gsm8k checks each word problem's numeric answer"
                          " exactly")
    run.add_argument("--file", dest="suite_file", type=Path,
                     help="the suite's data file (MRBench_V2.json; GSM8K's JSONL)")
    run.add_argument("--limit", type=int, default=20,
                     help="--suite: dialogues or problems to run (default 20)")
    add_run_flags(run, model_help="the chat model for this run, a litellm id (EVAL_MODEL)")
    run.add_argument("--repeat", type=repetitions, default=env.repeat, metavar="K|auto[:MAX]",
                     help="run each case K independent times, or auto: another time only"
                          " while its verdict is open, at most MAX (default 5) (EVAL_REPEAT,"
                          " default 1)")
    run.add_argument("--failed", nargs="?", const="last", metavar="RUN",
                     help="run again the items that did not pass in this stored run (id or"
                          " prefix; default: the last), under its plan, as a new run linked"
                          " to it")
    run.add_argument("--junit", type=Path, help="also write JUnit XML for CI systems")
    add_item_flags(run)
    add_ray_flag(run)
    run.add_argument("--max-cost", type=float, default=env.max_cost,
                     help="stop issuing model calls once the run's cost reaches this many USD"
                          " (EVAL_MAX_COST); unstarted cases are SKIPPED and the exit is 1")
    run.set_defaults(handler=run_command)
    res = sub.add_parser("resume", help="run what an interrupted run left, into that run")
    res.add_argument("run", nargs="?", help="the run id (default: the newest interrupted one)")
    res.add_argument("--concurrency", type=positive, default=env.concurrency)
    res.add_argument("--artifact", type=Path, default=None)
    res.add_argument("--fail-on-skip", action=argparse.BooleanOptionalAction, default=None)
    res.add_argument("--max-cost", type=float, default=None)
    add_ray_flag(res)
    res.set_defaults(handler=resume)
    runs_ = sub.add_parser("runs", help="list the stored runs")
    runs_.add_argument("--import", dest="import_artifact", metavar="ARTIFACT", type=Path,
                       help="put the run in this artifact into the store (the cases a store"
                            " that was down missed), then list")
    runs_.set_defaults(handler=runs)
    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("--groups", action="store_true", help="list the groups instead")
    lst.set_defaults(handler=list_cases)
    sub.add_parser("needs-local-model", help="exit 0 when a run would use the embedded model"
                   " (make eval asks)").set_defaults(handler=needs_local_model)


def run_command(args: argparse.Namespace) -> int:
    """`python -m evals [run]`: the suite, a case file, an endpoint, or a rated suite."""
    if args.failed is not None:
        return run_failed(args)
    if args.suite:
        return run_suite(args)
    options = run_options(args)
    if args.endpoint:
        return run_endpoint_command(args, options)
    try:
        items = select_items(options.selection)
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not items:
        raise CliError("nothing selected to run")
    return with_models(options, items, [options.model],
                       lambda settings, opts: run_once(items, opts, settings))


def list_cases(args: argparse.Namespace) -> int:
    try:
        cases = load_cases()
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if args.groups:
        counts = Counter(c.group for c in cases if c.group)
        for name, n in sorted(counts.items()):
            print(f"{name:<32} {n} case(s)")
        print(f"{len(counts)} groups · {sum(1 for c in cases if not c.group)} cases in none")
        return 0
    for c in cases:
        print(f"{c.where:<32} {c.id}" + (f"  [{c.group}]" if c.group else ""))
    print(f"{len(cases)} cases")
    return 0


def needs_local_model(args: argparse.Namespace) -> int:
    settings, env = get_settings(), eval_settings()
    local = uses_local_model(settings, env.model) or \
        uses_local_model(settings, env.judge_model, "judge") or \
        uses_local_model(settings, None, "sim_user")  # the scenarios' visitor
    return 0 if local else 1


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
    """The narrow questions this judge settles the items' undecided checks with."""
    if judge is None:
        return {}
    kinds = {c.kind for i in items for c in i.checks}
    return {q.kind: q.hash() for q in QUESTIONS.values()
            if q.check in kinds and judge.settles(q.kind).trusted}


def visitor_settings(visitor: ChatModel) -> str:
    """A hash of what decides the visitor's replies besides its model id (listed apart) and
    its instructions: its transport's identity (endpoint, temperature, token cap, a local
    model file), which holds no key."""
    return digest({k: v for k, v in identity(visitor).items() if k != "model"})


def visitor_for(settings: Settings, items: Sequence[EvalItem]) -> ChatModel | None:
    """The simulated visitor (the sim_user job) when the items hold conversations."""
    return model_for_job(settings, "sim_user") if has_conversations(items) else None


def print_start(model_id: str, items: Sequence[EvalItem], repeat: int, settings: Settings,
                rule: RepeatRule | None = None, steps: Sequence[int] = ()) -> None:
    """What the run will ask, and its bounds in model calls; `steps`, each version's tool
    rounds per turn (a frozen agent's are its own; default: one version, today's)."""
    steps = steps or [settings.max_tool_steps]
    versions = len(steps)
    conversations = [i for i in items if isinstance(i, Conversation)]
    turns = sum(c.scenario.max_turns for c in conversations)
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


def cost_controls(cap: float | None, called: list[tuple[str, str]]) -> Controls:
    """The run's cost cap. Every model the run calls counts toward it (the chat model, the
    judge, the simulated visitor), so each must have a known price."""
    if cap is None:
        return Controls()
    for role, called_id in called:
        if price_per_token(called_id) is None:
            raise CliError(f"cannot start: --max-cost: the price of {called_id} (the {role}) is"
                           " unknown, so a cost cap cannot be kept; leave it out for this"
                           " model")
    return Controls(max_cost_usd=cap)


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
                   resume: RunRecord | None = None, rerun_of: str | None = None) -> int:
    """`python -m evals run` (and `resume`): one run of today's agent, stored as it goes."""
    (model,), judge = start_models(settings, items, options.judge, options.model)
    visitor = visitor_for(settings, items)
    called = [("chat model", model.model_id)]
    called += [("judge", judge.model.model_id)] if judge else []
    called += [("visitor", visitor.model_id)] if visitor else []
    controls = cost_controls(options.max_cost, called)
    plan = plan_for(items, judge, options.repeat, options.selection, options.rule, visitor)
    if resume is not None:
        if resume.plan is None or resume.plan.fingerprint != plan.fingerprint:
            changes = plan.changes_since(resume.plan) if resume.plan else []
            raise CliError("\n".join([f"run {resume.run_id} ran another plan; it cannot be"
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
    progress = progress_bar(todo)  # with an auto rule, at most this many
    run, models = run_settings(options, judge, visitor, pid=os.getpid(), rerun_of=rerun_of)
    async with prepared(settings) as prep:

        async def say_impact(contexts: dict[str, FrozenContext]) -> None:
            print(await run_summary(prep.store, contexts, items, plan, model.model_id,
                                    agent_settings(settings), options.cache))

        with stop_on_signals(controls.stop) as got:
            try:
                records = await run_versions(
                    prep, items, [Version("current", model,
                                          ref=asked_model(settings, options.model))],
                    plan, settings=run, models=models, vision=options.vision, judge=judge,
                    visitor=visitor, progress=progress, controls=controls, resume=resume,
                    artifact=options.artifact, cache=options.cache,
                    on_composed=None if resume else say_impact,
                    execute=cluster_runner(cluster_plan(options, settings)) if options.ray
                    else run_variants)
            except AgentChanged as exc:  # refused before anything ran: as the store has it
                if resume is not None:
                    write_run(resume, options.artifact)
                raise CliError(str(exc)) from exc
        store_failed = prep.store_failed
    progress(None)
    record = records["current"]
    report_run(record)
    print(f"run: {record.run_id} ({'not all stored' if store_failed else 'stored'}) ·"
          f" artifact: {write_run(record, options.artifact)}")
    if store_failed:
        print(f"error: {store_failed}; the artifact has every finished case:"
              f" python -m evals runs --import {options.artifact} puts them there",
              file=sys.stderr)
    if options.junit:
        print(f"junit: {write_junit(record, options.junit)}")
    if record.status == "interrupted":
        print(f"interrupted: {len(record.cases)} finished, {len(record.unfinished)} not run;"
              f" python -m evals resume {record.run_id} runs the rest", file=sys.stderr)
        return exit_for(got) or 1
    code = exit_code(record.cases, fail_on_skip=options.fails_on_skip) or \
        (1 if store_failed else 0)
    capped = [r for r in record.cases if (r.skipped_reason or "").startswith("cost cap")]
    if capped:
        print(f"cost cap reached: {len(capped)} case(s) not run", file=sys.stderr)
        return code or 1
    return code


def cluster_plan(options: RunOptions, settings: Settings) -> ClusterPlan:
    """Where a `--ray` run goes: its workers ask for the models as this run did, and start
    the embedded model on their own nodes when the run uses it."""
    assert options.ray is not None
    try:
        address = check_address(options.ray)
    except ClusterError as exc:
        raise CliError(str(exc)) from exc
    local = settings.local_model_url == ON_WORKERS
    return ClusterPlan(
        address=address,
        settings=settings.model_copy(update={"local_model_url": None}) if local else settings,
        local_model=local, server=conninfo(settings), refs={"current": options.model},
        judge_ref=options.judge.model)


def resume(args: argparse.Namespace) -> int:
    """`python -m evals resume [RUN]`: run what an interrupted run left, into the same run.
    The run is locked in the store for as long as this runs it: a second resume is refused."""
    run = in_store(lambda settings: _resumable(settings, args.run))
    try:
        return _resume_locked(args, run)
    finally:
        try:
            in_store(lambda settings: _unlock(settings, run.run_id or ""))
        except Exception as exc:  # the run's outcome stands; a dead holder's lock is taken over
            print(f"warning: run {run.run_id}: its lock was not released ({type(exc).__name__}:"
                  f" {exc}); the next resume takes it over once this process is gone",
                  file=sys.stderr)


def _resume_locked(args: argparse.Namespace, run: RunRecord) -> int:
    if run.plan is None or run.agent is None:
        raise CliError(f"run {run.run_id} has no plan or agent: it cannot be resumed")
    selection = run.plan.selection or Selection()
    options = RunOptions(
        selection=selection, model=run.agent.ref,
        judge=_judge_of(run, auto_calibrate=eval_settings().auto_calibrate),
        concurrency=args.concurrency, repeat=run.plan.repeat,
        rule=run.plan.repeat_rule, fail_on_skip=args.fail_on_skip, max_cost=args.max_cost,
        vision=eval_settings().vision, cache=run.settings.cache or eval_settings().cache,
        ray=args.ray,
        **({"artifact": args.artifact} if args.artifact is not None else {}))
    try:
        items = select_items(selection)
    except CaseFileError as exc:
        raise CliError(f"the run's cases no longer load: {exc}") from exc
    print(f"resuming run {run.run_id}: {len(run.cases)} finished, {len(run.unfinished)} to run")
    began = run.agent.settings  # a resumed run finishes with the agent it began with
    return with_models(options, items, [options.model], lambda settings, opts: run_once(
        items, opts, as_recorded(settings, began), resume=run))


def run_failed(args: argparse.Namespace) -> int:
    """`python -m evals run --failed [RUN]`: the items that did not pass in a stored run (any
    status but PASS in any repetition), run again as a new run under that run's plan settings
    (its selection narrowed to them, its repetitions, its judge, its model unless --model)."""
    given = [name for name, value in (
        ("a case file", args.case_file), ("--cases/EVAL_CASES", args.cases),
        ("--group/EVAL_GROUPS", args.group), ("--cases-only", args.cases_only),
        ("--scenarios-only", args.scenarios_only), ("--endpoint", args.endpoint),
        ("--suite", args.suite)) if value]
    if given:
        raise CliError(f"run --failed takes its items from the run; leave out {', '.join(given)}")
    source = in_store(lambda settings: _run_to_rerun(settings, args.failed))
    missed = failed_ids(source)
    left = f"; {len(source.unfinished)} repetition(s) never ran (python -m evals resume" \
        f" {source.run_id} runs them)" if source.unfinished else ""
    if not missed:
        print(f"run {source.run_id}: nothing failed, nothing to run again{left}")
        return 0
    if source.plan is None:
        raise CliError(f"run {source.run_id} has no plan: its items cannot be run again")
    sel = source.plan.selection or Selection()
    try:  # everything the run could have run, then its misses among them
        loaded = select_items(Selection(file=sel.file, only=sel.only, full=sel.full))
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    items = [i for i in loaded if i.id in missed]
    gone = [cid for cid in missed if cid not in {i.id for i in items}]
    if gone:
        print(f"note: {len(gone)} item(s) of run {source.run_id} that did not pass are no"
              f" longer in the case files, not run: {', '.join(gone)}", file=sys.stderr)
    if not items:
        raise CliError(f"none of the {len(missed)} item(s) that did not pass in run"
                       f" {source.run_id} is in the case files any more")
    print(f"running again {len(items)} item(s) that did not pass in run {source.run_id}:"
          f" {', '.join(i.id for i in items)}{left}")
    narrowed = Selection(file=sel.file, names=tuple(i.id for i in items), only=sel.only,
                         full=sel.full)
    options = dataclasses.replace(
        run_options(args, narrowed),
        judge=_judge_of(source, bool(args.advisory_judge), bool(args.auto_calibrate)),
        repeat=source.plan.repeat,
        rule=source.plan.repeat_rule,
        model=args.model or (source.agent.ref if source.agent else None))
    return with_models(options, items, [options.model], lambda settings, opts: run_once(
        items, opts, settings, rerun_of=source.run_id))


def failed_ids(run: RunRecord) -> list[str]:
    """The items of a run with any repetition that did not pass, in the run's order."""
    return list(dict.fromkeys(r.id for r in run.cases if r.status != "PASS"))


async def _run_to_rerun(settings: Settings, ref: str) -> RunRecord:
    async with open_store(settings) as store:
        if ref == "last":
            rows = await store.list_runs(1)
            if not rows:
                raise CliError("no stored run to re-run the failures of (python -m evals runs)")
            ref = rows[0].id
        return await store.load_run(ref)


def _judge_of(run: RunRecord, advisory: bool = False, auto_calibrate: bool = True
              ) -> JudgeChoice:
    """The judge a run was judged by, asked for again (and asked anyway when it was
    advisory, or `advisory` says so)."""
    return JudgeChoice(run.models.judge, run.settings.judge_pack, run.judge_trusted_by_flag,
                       run.settings.advisory_judge or advisory, auto_calibrate)


async def _resumable(settings: Settings, ref: str | None) -> RunRecord:
    """The run to resume, locked for this process: the lock is taken before the run is read,
    so two resumes cannot both see it unfinished."""
    async with open_store(settings) as store:
        if ref is None:
            rows = [r for r in await store.list_runs(200) if r.status != "complete"]
            if not rows:
                raise CliError("no interrupted run to resume (python -m evals runs)")
            ref = rows[0].id
        run_id = await store.resolve_run(ref)
        try:
            await store.lock_run(run_id)
        except RunLocked as exc:
            raise CliError(f"cannot resume: {exc}") from exc
        try:
            run = await store.load_run(run_id)
            pid = run.settings.pid
            alive = pid is not None and pid != os.getpid() and psutil.pid_exists(pid)
            if run.status == "complete" or (run.status == "running" and alive):
                raise CliError(f"run {run.run_id} is {run.status}"
                               + (f" (process {pid} is still running it)" if alive else "")
                               + ": nothing to resume")
        except BaseException:
            await store.unlock_run(run_id)
            raise
    return run


async def _unlock(settings: Settings, run_id: str) -> None:
    async with open_store(settings) as store:
        await store.unlock_run(run_id)


def prefix_lines() -> list[str]:
    """What the embedded model's saved prompt prefixes did in this process."""
    lines = []
    for cache in PREFIX_CACHES.values():
        lines.append(f"prefix cache: {cache.hits} restored from disk, {cache.saves} computed"
                     f" and saved ({cache.folder})")
        lines += [f"prefix cache: {failure}" for failure in cache.failures[:3]]
    return lines


def report_run(record: RunRecord) -> None:
    print_report(record.cases, sys.stdout, trusted_by_flag=record.judge_trusted_by_flag)
    for line in [*stats_lines(record.cases), *attack_lines(record.cases),
                 *conversation_lines(record.cases),
                 *cut_lines(record.cases), *prefix_lines()]:
        print(line)
    for line in [*cost_lines(record.cases, record.models.chat), *replay_lines(record.cases)]:
        print(line)


def runs(args: argparse.Namespace) -> int:
    record = None
    if getattr(args, "import_artifact", None) is not None:
        try:
            record = read_run(args.import_artifact)
        except ArtifactError as exc:
            raise CliError(str(exc)) from exc

    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            if record is not None:
                n, held = await store.import_run(record)
                print(f"imported run {record.run_id} ({record.status}): {n} case(s) from"
                      f" {args.import_artifact}"
                      + (f"; {held} the store held already, kept as stored" if held else ""))
            rows = await store.list_runs()
        if not rows:
            print("no stored runs yet: python -m evals run")
        for r in rows:
            t = r.totals
            print(f"{r.id}  {r.started_at:%Y-%m-%d %H:%M}  {r.status:<11}"
                  f" {r.model:<40} plan {r.plan_fingerprint[:8]}"
                  f"  {t.passed if t else 0}/{t.cases if t else 0} passed"
                  + (f"  (point {r.point})" if r.point else "")
                  + (f"  (re-run of {r.rerun_of})" if r.rerun_of else "")
                  + (f"  ({r.assessments} assessment(s) beside it)" if r.assessments else ""))
        return 0

    return in_store(body)

