"""The commands that compare agent versions: point, compare, gate."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys

from app.chat.models import ChatModel, ModelCallError, model_for_job
from app.settings import Settings
from evals.cli.common import (
    CliError,
    Commands,
    RunOptions,
    add_item_flags,
    add_run_flags,
    asked_model,
    in_store,
    open_store,
    progress_bar,
    repetitions,
    run_options,
    start_models,
    with_models,
)
from evals.cli.run import plan_for, print_start, report_run, run_settings, visitor_for
from evals.execute.agent import (
    FrozenAgentError,
    PlanMismatch,
    agent_info,
    agent_settings,
    all_contexts,
    as_recorded,
    git_state,
    named,
)
from evals.execute.session import Version, prepared, run_versions, validate_versions
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.selection import UnknownNames, item_files, select_items
from evals.record.artifact import write_run
from evals.record.fingerprint import Point, Selection
from evals.report.compare import compare_runs, render
from evals.report.gate import HARD_FILES, TRUSTED_JUDGE_HINT
from evals.report.gate import gate as apply_gate
from evals.report.gate import render as render_gate
from evals.settings import eval_settings, percent


def register(sub: Commands) -> None:
    env = eval_settings()
    point = sub.add_parser("point", help="comparison points: a frozen agent and its plan")
    psub = point.add_subparsers(dest="point_command", required=True)
    save = psub.add_parser("save", help="freeze today's agent (or a stored run's) and plan")
    save.add_argument("name")
    save.add_argument("--from-run", help="freeze the agent and plan of this stored run")
    add_run_flags(save, model_help="the chat model the point freezes (EVAL_MODEL)")
    add_item_flags(save)
    save.add_argument("--repeat", type=repetitions, default=env.repeat,
                      metavar="K|auto[:MAX]")
    save.set_defaults(handler=save_point)
    psub.add_parser("list", help="the saved points").set_defaults(handler=list_points)
    show = psub.add_parser("show", help="one point: its agent, contexts and plan")
    show.add_argument("name")
    show.set_defaults(handler=show_point)
    cmp_ = sub.add_parser("compare", help="a point's frozen agent against today's, paired")
    cmp_.add_argument("name", nargs="?", help="the comparison point")
    cmp_.add_argument("--runs", nargs=2, metavar=("A", "B"),
                      help="pair two stored runs instead (same plan only)")
    cmp_.add_argument("--adopt-plan", action="store_true",
                      help="when the plan changed: save a new point with the old agent and"
                           " the new plan, and compare under it")
    add_run_flags(cmp_, model_help="today's side runs this model instead (a model switch)")
    cmp_.set_defaults(handler=compare)
    gate_ = sub.add_parser("gate", help="the gate for a model switch or a prompt change")
    add_run_flags(gate_, model_help="the model to gate (EVAL_MODEL)")
    add_item_flags(gate_)
    gate_.add_argument("--against", help="a comparison point to list regressions against")
    gate_.add_argument("--hard", default=env.hard_files,
                       help="comma list of files that allow no miss (EVAL_HARD_FILES; default"
                            " honest-absence,manual-grounding)")
    gate_.add_argument("--max-cost-increase", type=percent, default=env.max_cost_increase,
                       metavar="PCT", help="fail when the cost per item rose more than PCT"
                       " against the point, or cannot be checked (EVAL_MAX_COST_INCREASE)")
    gate_.add_argument("--max-p95-increase", type=percent, default=env.max_p95_increase,
                       metavar="PCT", help="fail when the p95 latency rose more than PCT"
                       " against the point, or cannot be checked (EVAL_MAX_P95_INCREASE)")
    gate_.set_defaults(handler=gate)


def _items(selection: Selection) -> list[EvalItem]:
    """Today's items as a selection names them: cases and scenario conversations alike."""
    try:
        items = select_items(selection)
    except CaseFileError as exc:
        raise CliError("\n".join(exc.errors)) from exc
    if not items:
        raise CliError("nothing selected")
    return items


def _plan_refused(what: str, changes: list[str], hint: str | None = None) -> CliError:
    return CliError("\n".join([what, *(f"  {line}" for line in changes or
                                        ["(a run has no plan)"]),
                               *([hint] if hint else [])]))


# points --------------------------------------------------------------------------------------

def save_point(args: argparse.Namespace) -> int:
    if args.from_run:
        return in_store(lambda settings: _point_from_run(settings, args.name, args.from_run))
    options = run_options(args)
    items = _items(options.selection)
    return with_models(options, items, [options.model],
                       lambda s, opts: _save_point(s, items, args.name, opts))


def list_points(args: argparse.Namespace) -> int:
    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            rows = await store.list_points()
        if not rows:
            print("no comparison points yet: python -m evals point save NAME")
        for r in rows:
            print(f"{r.name:<24} {r.created_at:%Y-%m-%d %H:%M}  {r.model or '?':<40}"
                  f" plan {r.plan_fingerprint[:8]} agent {r.agent_fingerprint[:8]}")
        return 0

    return in_store(body)


def show_point(args: argparse.Namespace) -> int:
    p = in_store(lambda settings: _load_point(settings, args.name))
    a = p.agent
    print(f"point {p.name} (saved {p.created}{', from run ' + p.from_run if p.from_run else ''})")
    print(f"agent {a.fingerprint}: {a.model} {a.settings.model_dump()} at"
          f" {a.git_commit or 'no commit'}{' (dirty)' if a.git_dirty else ''}")
    for key, ctx in sorted(a.contexts.items()):
        names = ", ".join(str(fn.get("name", "?")) if isinstance(fn := t.get("function"), dict)
                          else "?" for t in ctx.tools)
        print(f"  {key}: {len(ctx.system_prompt)} characters of system prompt; tools: {names}")
    pl = p.plan
    selection = pl.selection.describe() if pl.selection else None
    visitor = f", visitor {pl.visitor.model} (instructions {pl.visitor.prompt_hash})" \
        if pl.visitor else ""
    print(f"plan {pl.fingerprint}: {len(pl.cases)} items × {pl.repeats}, judge"
          f" {pl.judge.model_dump()}{visitor}, harness {pl.harness}, {len(pl.fixtures)}"
          " fixtures" + (f", selection {selection}" if selection else ""))
    return 0


async def _load_point(settings: Settings, name: str) -> Point:
    async with open_store(settings) as store:
        return await store.load_point(name)


async def _save_point(settings: Settings, items: list[EvalItem], name: str,
                      options: RunOptions) -> int:
    (model,), judge = start_models(settings, items, options.judge, options.model)
    plan = plan_for(items, judge, options.repeat, options.selection, options.rule,
                    visitor_for(settings, items))
    async with prepared(settings) as prep:
        agent = agent_info(model.model_id, agent_settings(settings),
                           await all_contexts(prep.env, items),
                           await asyncio.to_thread(git_state),
                           model_ref=asked_model(settings, options.model))
        p = Point(name=name, created=dt.datetime.now(dt.UTC).isoformat(), plan=plan,
                  agent=agent)
        await prep.store.save_point(p)
    print(f"saved point {p.name}: agent {agent.fingerprint} ({agent.model},"
          f" {len(agent.contexts)} contexts), plan {plan.fingerprint} ({_counted(items)})")
    return 0


async def _point_from_run(settings: Settings, name: str, run_ref: str) -> int:
    async with open_store(settings) as store:
        run = await store.load_run(run_ref)
        if run.plan is None or run.agent is None or run.status != "complete":
            raise CliError(f"run {run.run_id} is {run.status} or has no plan and agent: it"
                           " cannot become a point")
        p = Point(name=name, created=dt.datetime.now(dt.UTC).isoformat(), plan=run.plan,
                  agent=run.agent, from_run=run.run_id)
        await store.save_point(p)
    print(f"saved point {p.name} from run {run.run_id}: agent {p.agent.fingerprint},"
          f" plan {p.plan.fingerprint}")
    return 0


# compare -------------------------------------------------------------------------------------

def compare(args: argparse.Namespace) -> int:
    if args.runs:
        return in_store(lambda settings: _compare_stored(settings, *args.runs))
    if not args.name:
        raise CliError("compare needs a point NAME, or --runs A B")
    loaded = in_store(lambda s: _load_point(s, args.name))
    planned, items = _point_items(loaded, args.adopt_plan)
    options = run_options(args, selection=_point_selection(loaded))
    return with_models(options, items, [options.model, loaded.agent.ref],
                       lambda s, opts: _compare_point(s, loaded, items, opts,
                                                      args.adopt_plan, planned))


def _point_items(p: Point, adopt_plan: bool) -> tuple[Selection | None, list[EvalItem]]:
    """The selection a point's plan records and today's items for it. A name the selection
    holds that is no case or scenario any more (deleted or renamed) is refused, saying what to
    do; with --adopt-plan it is left out (if anything is left), and the plan changes say so."""
    try:
        items = select_items(_point_selection(p))
    except UnknownNames as exc:
        saved = p.plan.selection or Selection()
        gone = ", ".join(repr(n) for n in exc.names)
        left = tuple(n for n in saved.names if n not in exc.names)
        what = (f"point {p.name} selects {gone}, no longer a case or scenario file or id"
                " (deleted or renamed since the point was saved)")
        if not left:
            raise CliError(f"{what}, and nothing else: it cannot run again. Save a point to"
                           " compare against from now on: python -m evals point save NAME"
                           " --cases …") from exc
        if not adopt_plan:
            raise CliError(f"{what}. Rerun with --adopt-plan to leave {gone} out: a new point"
                           f" keeps the old agent and adopts the plan of the rest"
                           f" ({','.join(left)}); or save a point of today's agent for those:"
                           f" python -m evals point save NAME --cases {','.join(left)}"
                           ) from exc
        print(f"leaving out {gone}: no longer a case or scenario")
        return (saved.model_copy(update={"names": left}),
                _items(_point_selection(p).model_copy(update={"names": left})))
    except CaseFileError as exc:
        raise CliError("\n".join([f"point {p.name}'s selection no longer loads:", *exc.errors])
                       ) from exc
    if not items:
        raise CliError(f"point {p.name}'s selection selects nothing today")
    return p.plan.selection, items


def _point_selection(p: Point) -> Selection:
    """What a point runs: its own selection; a point saved before scenarios were compared
    ran cases only, and still does."""
    if p.plan.selection is None:
        return Selection(only="cases")
    if p.plan.visitor is None and p.plan.selection.only is None and not any(
            "@" in item for item in p.plan.cases):
        return p.plan.selection.model_copy(update={"only": "cases"})
    return p.plan.selection


def _unfrozen(p: Point, exc: PlanMismatch, planned: Selection | None) -> CliError:
    """A point whose agent was never told anything in a context items use today: which items,
    why, and what to do (adopting the plan cannot help: the agent is the point's)."""
    where = "; ".join(f"{key} ({named(ids)})" for key, ids in exc.missing.items())
    flags = _selection_flags(planned)
    return CliError(f"point {p.name} cannot run these items: its frozen agent was never told"
                    f" anything in their context: {where}. Each is new, or its page, audience"
                    " or catalogue changed since the point was saved, so nothing says what that"
                    " agent would be told there (--adopt-plan keeps that agent, so it cannot"
                    " help). Save a point of today's agent to compare against from now on:"
                    f" python -m evals point save NAME{flags}; or put the items back in a"
                    f" context the point froze ({', '.join(sorted(p.agent.contexts))})")


def _frozen_model(settings: Settings, p: Point) -> ChatModel:
    """The model a point's frozen agent runs on, asked for as the point asked, at the
    temperature it recorded (unset: the provider's default), not today's."""
    try:
        return model_for_job(as_recorded(settings, p.agent.settings), "chat", p.agent.ref)
    except ModelCallError as exc:
        raise CliError(f"cannot start: {exc}") from exc


def tool_steps(versions: list[Version], settings: Settings) -> list[int]:
    """Each version's tool rounds per turn: a frozen agent's recorded limit, else today's."""
    return [v.max_steps or settings.max_tool_steps for v in versions]


def _selection_flags(selection: Selection | None) -> str:
    """The `point save` flags that select what a selection did."""
    if selection is None:
        return ""
    return "".join([f" --cases {','.join(selection.names)}" if selection.names else "",
                    f" --group {','.join(selection.groups)}" if selection.groups else "",
                    f" --{selection.only}-only" if selection.only else "",
                    " --full" if selection.full else ""])


def _counted(items: list[EvalItem]) -> str:
    talks = sum(1 for i in items if i.executor == "conversation")
    return f"{len(items) - talks} cases" + (f", {talks} conversations" if talks else "")


async def _compare_stored(settings: Settings, a: str, b: str) -> int:
    async with open_store(settings) as store:
        base, cur = await store.load_run(a), await store.load_run(b)
        if base.plan is None or cur.plan is None or \
                base.plan.fingerprint != cur.plan.fingerprint:
            changes = cur.plan.changes_since(base.plan) if base.plan and cur.plan else []
            raise _plan_refused(f"runs {base.run_id} and {cur.run_id} ran different plans; a"
                                " changed plan is never an improvement of the agent:", changes)
        # A run stored before the plan held the visitor: its model is in the run's models.
        if base.models.visitor != cur.models.visitor:
            raise _plan_refused(f"runs {base.run_id} and {cur.run_id} ran different plans; a"
                                " changed plan is never an improvement of the agent:",
                                [f"simulated visitor's model changed: {base.models.visitor}"
                                 f" -> {cur.models.visitor}"])
        result = compare_runs(base, cur)
        cid = await store.save_comparison(None, base.run_id or "", cur.run_id or "", result)
    print(render(result, f"run {base.run_id} ({base.models.chat})",
                 f"run {cur.run_id} ({cur.models.chat})"))
    print(f"comparison {cid} stored")
    return 0


async def _compare_point(settings: Settings, p: Point, items: list[EvalItem],
                         options: RunOptions, adopt_plan: bool,
                         planned: Selection | None) -> int:
    (current_model,), judge = start_models(settings, items, options.judge, options.model)
    baseline_model = _frozen_model(settings, p)
    visitor = visitor_for(settings, items)
    plan = plan_for(items, judge, p.plan.repeat, planned, p.plan.repeat_rule, visitor)
    asked = p.name
    versions = [Version("baseline", baseline_model, p.agent),
                Version("current", current_model, ref=asked_model(settings, options.model))]
    try:
        validate_versions(items, versions)  # before anything is written or adopted
    except PlanMismatch as exc:
        raise _unfrozen(p, exc, planned) from exc
    except FrozenAgentError as exc:
        raise CliError(f"point {p.name} can no longer run: {exc}") from exc
    if plan.fingerprint != p.plan.fingerprint:
        changes = plan.changes_since(p.plan)
        if not adopt_plan:
            raise _plan_refused(f"the plan changed since point {p.name}; a changed plan is never"
                                " reported as an improvement. Changes:", changes,
                                "rerun with --adopt-plan to save a new point that keeps the old"
                                " agent and adopts this plan")
        p = Point(name=f"{p.name}+{plan.fingerprint[:8]}",
                  created=dt.datetime.now(dt.UTC).isoformat(), plan=plan, agent=p.agent)
        print(f"adopting the new plan ({len(changes)} change(s)) as point {p.name}")
    print_start(f"{p.agent.model} (point {p.name}) vs {current_model.model_id}", items,
                plan.repeat, settings, rule=plan.repeat_rule,
                steps=tool_steps(versions, settings))
    progress = progress_bar(len(items) * plan.repeat * 2)
    run, models = run_settings(options, judge, visitor)
    try:
        async with prepared(settings) as prep:
            if p.name != asked:
                await prep.store.save_point(p)
            records = await run_versions(
                prep, items, versions, plan, settings=run, models=models,
                vision=options.vision, judge=judge, visitor=visitor, progress=progress,
                point=p.name, cache=options.cache)
            result = compare_runs(records["baseline"], records["current"])
            failed = prep.store_failed
            cid = None if failed else await prep.store.save_comparison(
                p.name, records["baseline"].run_id or "", records["current"].run_id or "",
                result)
    except (PlanMismatch, FrozenAgentError) as exc:
        raise CliError(f"point {p.name} can no longer run: {exc}") from exc
    finally:
        progress(None)
    print(render(result, f"point {p.name} ({p.agent.model}, agent {p.agent.fingerprint[:8]},"
                         f" run {records['baseline'].run_id})",
                 f"today ({current_model.model_id}, run {records['current'].run_id})"))
    if cid is None:
        print(f"error: {failed}; the comparison is not stored", file=sys.stderr)
        return 1
    print(f"comparison {cid} stored")
    return 0


# gate ----------------------------------------------------------------------------------------

def gate(args: argparse.Namespace) -> int:
    options = run_options(args)
    items = _items(options.selection)
    hard = _hard_files(args.hard)
    against = in_store(lambda s: _load_point(s, args.against)) if args.against else None
    models = [options.model] + ([against.agent.ref] if against else [])
    limits = (args.max_cost_increase, args.max_p95_increase)
    return with_models(options, items, models,
                       lambda s, opts: _gate(s, items, opts, against, hard, limits))


def _hard_files(text: str | None) -> tuple[str, ...]:
    """--hard's files, each a case or scenario file: a misspelt name would hold no file hard,
    and the gate would pass what it was asked to refuse."""
    hard = tuple(h.strip() for h in text.split(",") if h.strip()) if text else HARD_FILES
    try:
        known = item_files()
    except CaseFileError as exc:
        raise CliError("\n".join(exc.errors)) from exc
    unknown = [h for h in hard if h not in known]
    if unknown:
        raise CliError(f"--hard (EVAL_HARD_FILES): {', '.join(repr(h) for h in unknown)}"
                       f" {'is' if len(unknown) == 1 else 'are'} no case or scenario file."
                       f" Files (without .yaml): {', '.join(known)}")
    return hard


async def _gate(settings: Settings, items: list[EvalItem], options: RunOptions,
                against: Point | None, hard: tuple[str, ...],
                limits: tuple[float | None, float | None] = (None, None)) -> int:
    # The baseline's model is made once its point is known (named, or found below).
    (model,), judge = start_models(settings, items, options.judge, options.model)
    visitor = visitor_for(settings, items)
    plan = plan_for(items, judge, 2, options.selection, visitor=visitor)
    progress = progress_bar(len(items) * 2 * (2 if against else 1))
    run, run_models = run_settings(options, judge, visitor, gate=True)
    async with prepared(settings) as prep:
        # The gate always runs twice; a point's plan is compared with its own repetitions.
        if against is None:
            for repeat in (1, 2):
                same = plan_for(items, judge, repeat, options.selection, visitor=visitor)
                against = against or await prep.store.find_point(model.model_id,
                                                                 same.fingerprint)
            if against is not None:
                print(f"comparing against point {against.name} (same model and plan)")
        else:
            same = plan_for(items, judge, against.plan.repeat, options.selection,
                            against.plan.repeat_rule, visitor)
            if against.plan.fingerprint != same.fingerprint:
                raise _plan_refused(f"point {against.name} has another plan; regressions"
                                    " cannot be paired:", same.changes_since(against.plan))
        versions = [Version("current", model, ref=asked_model(settings, options.model))]
        if against is not None:  # its frozen agent, at the temperature it recorded
            versions.insert(0, Version("baseline", _frozen_model(settings, against),
                                       against.agent))
        print_start(model.model_id, items, 2, settings, steps=tool_steps(versions, settings))
        try:
            records = await run_versions(prep, items, versions, plan, settings=run,
                                         models=run_models, vision=options.vision, judge=judge,
                                         visitor=visitor, progress=progress,
                                         point=against.name if against else None,
                                         cache=options.cache)
        except PlanMismatch as exc:
            raise CliError(str(exc)) from exc
        finally:
            progress(None)
        comparison = compare_runs(records["baseline"], records["current"]) \
            if against is not None else None
        failed = prep.store_failed
    record = records["current"]
    report_run(record)
    write_run(record, options.artifact)
    hint = f"{judge.model.model_id}: {judge.trust.reason}. To decide: {TRUSTED_JUDGE_HINT}" \
        if judge is not None and not judge.decides else None
    result = apply_gate(record.cases, hard, comparison, judge_hint=hint,
                        max_cost_increase=limits[0], max_p95_increase=limits[1],
                        cache=record.settings.cache)
    print()
    print(render_gate(result))
    if failed:
        print(f"error: {failed}; the artifact has the run: python -m evals runs --import"
              f" {options.artifact} puts it there", file=sys.stderr)
        return 1
    return result.exit_code
