"""The commands that compare agent versions: point, compare, gate."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
from pathlib import Path

from app.settings import Settings
from evals.cli.runs import (
    asked_model,
    env_bool,
    open_store,
    pack_settings,
    plan_for,
    point_ref,
    print_start,
    progress_bar,
    report_run,
    selected_cases,
    selection_spec,
    start_models,
    store_only,
    store_value,
    with_models,
)
from evals.load.cases import Case, CaseFileError, load_cases, select, select_groups
from evals.record.fingerprint import plan_changes
from evals.record.store import Point, StoreError
from evals.report.console import write_record

# points --------------------------------------------------------------------------------------

def point(args: argparse.Namespace) -> int:
    if args.point_command == "list":
        return store_only(_list_points)
    if args.point_command == "show":
        return store_only(lambda settings: _show_point(settings, args.name))
    if args.from_run:
        return store_only(lambda settings: _point_from_run(settings, args))
    try:
        cases = selected_cases(args)
    except CaseFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    return with_models(args, cases, [args.model], lambda s: _save_point(s, cases, args))


async def _list_points(settings: Settings) -> int:
    async with await open_store(settings) as store:
        rows = await store.list_points()
    if not rows:
        print("no comparison points yet: python -m evals point save NAME")
    for r in rows:
        print(f"{r['name']:<24} {r['created_at']:%Y-%m-%d %H:%M}  {r['model']:<40}"
              f" plan {r['plan_fingerprint'][:8]} agent {r['agent_fingerprint'][:8]}")
    return 0


async def _show_point(settings: Settings, name: str) -> int:
    async with await open_store(settings) as store:
        p = await store.load_point(name)
    a = p.agent
    print(f"point {p.name} (saved {p.created}{', from run ' + p.from_run if p.from_run else ''})")
    print(f"agent {a.fingerprint}: {a.model} {a.settings} at {a.git_commit or 'no commit'}"
          f"{' (dirty)' if a.git_dirty else ''}")
    for key, ctx in sorted(a.contexts.items()):
        names = ", ".join(t.get("function", {}).get("name", "?") for t in ctx.tools)
        print(f"  {key}: {len(ctx.system_prompt)} characters of system prompt; tools: {names}")
    pl = p.plan
    print(f"plan {pl.fingerprint}: {len(pl.cases)} cases × {pl.repeat}, judge {pl.judge},"
          f" harness {pl.harness}, {len(pl.fixtures)} fixtures"
          + (f", selection {pl.selection}" if pl.selection else ""))
    return 0


async def _save_point(settings: Settings, cases: list[Case], args: argparse.Namespace) -> int:
    from evals.execute.session import agent_settings, all_contexts, prepared
    from evals.record.fingerprint import agent_info, git_state

    started = start_models(settings, cases, args, args.model)
    if started is None:
        return 2
    (model,), judge = started
    plan = plan_for(cases, judge, args.repeat, selection_spec(args))
    async with prepared(settings) as prep:
        agent = agent_info(model.model_id, agent_settings(settings),
                           await all_contexts(prep.env, cases),
                           await asyncio.to_thread(git_state),
                           model_ref=asked_model(settings, args))
        p = Point(name=args.name, created=dt.datetime.now(dt.UTC).isoformat(), plan=plan,
                  agent=agent)
        await prep.store.save_point(p)
    print(f"saved point {p.name}: agent {agent.fingerprint} ({agent.model},"
          f" {len(agent.contexts)} contexts), plan {plan.fingerprint} ({len(plan.cases)} cases)")
    return 0


async def _point_from_run(settings: Settings, args: argparse.Namespace) -> int:
    async with await open_store(settings) as store:
        run = await store.load_run(args.from_run)
        if run.plan is None or run.agent is None or run.status != "complete":
            print(f"run {run.run_id} is {run.status} or has no plan and agent: it cannot"
                  " become a point", file=sys.stderr)
            return 2
        p = Point(name=args.name, created=dt.datetime.now(dt.UTC).isoformat(), plan=run.plan,
                  agent=run.agent, from_run=run.run_id)
        await store.save_point(p)
    print(f"saved point {p.name} from run {run.run_id}: agent {p.agent.fingerprint},"
          f" plan {p.plan.fingerprint}")
    return 0


# compare -------------------------------------------------------------------------------------

def compare(args: argparse.Namespace) -> int:
    if args.runs:
        return store_only(lambda settings: _compare_stored(settings, *args.runs))
    if not args.name:
        print("compare needs a point NAME, or --runs A B", file=sys.stderr)
        return 2
    try:
        loaded = store_value(lambda s: _load_point(s, args.name))
    except StoreError as exc:
        print(exc, file=sys.stderr)
        return 2
    cases = _point_cases(loaded, args)
    if cases is None:
        return 2
    return with_models(args, cases, [args.model, point_ref(loaded.agent)],
                       lambda s: _compare_point(s, loaded, cases, args))


async def _load_point(settings: Settings, name: str) -> Point:
    async with await open_store(settings) as store:
        return await store.load_point(name)


def _point_cases(p: Point, args: argparse.Namespace) -> list[Case] | None:
    """Today's cases selected as the point's were (the plan is checked against it later)."""
    spec = dict(part.split("=", 1) for part in (p.plan.selection or "").split("; ") if part)
    try:
        source = load_cases(Path(spec["file"])) if "file" in spec else load_cases()
        return select_groups(select(source, spec.get("cases")), spec.get("groups"))
    except CaseFileError as exc:
        print(f"the point's selection no longer loads: {exc}", file=sys.stderr)
        return None


async def _compare_stored(settings: Settings, a: str, b: str) -> int:
    from evals.report.compare import compare_runs, render

    async with await open_store(settings) as store:
        base, cur = await store.load_run(a), await store.load_run(b)
        if base.plan is None or cur.plan is None or \
                base.plan.fingerprint != cur.plan.fingerprint:
            changes = plan_changes(base.plan, cur.plan) if base.plan and cur.plan else []
            print(f"runs {base.run_id} and {cur.run_id} ran different plans; a changed plan is"
                  " never an improvement of the agent:", file=sys.stderr)
            for line in changes or ["(a run has no plan)"]:
                print(f"  {line}", file=sys.stderr)
            return 2
        result = compare_runs(base, cur)
        cid = await store.save_comparison(None, base.run_id or "", cur.run_id or "", result)
    print(render(result, f"run {base.run_id} ({base.models.get('chat')})",
                 f"run {cur.run_id} ({cur.models.get('chat')})"))
    print(f"comparison {cid} stored")
    return 0


async def _compare_point(settings: Settings, p: Point, cases: list[Case],
                         args: argparse.Namespace) -> int:
    from evals.execute.runner import FrozenAgentError
    from evals.execute.session import (
        PlanMismatch,
        Version,
        prepared,
        run_versions,
        validate_versions,
    )
    from evals.report.compare import compare_runs, render

    started = start_models(settings, cases, args, args.model, point_ref(p.agent))
    if started is None:
        return 2
    (current_model, baseline_model), judge = started
    plan = plan_for(cases, judge, p.plan.repeat, p.plan.selection)
    if plan.fingerprint != p.plan.fingerprint:
        changes = plan_changes(p.plan, plan)
        if not args.adopt_plan:
            print(f"the plan changed since point {p.name}; a changed plan is never reported as"
                  " an improvement. Changes:", file=sys.stderr)
            for line in changes:
                print(f"  {line}", file=sys.stderr)
            print("rerun with --adopt-plan to save a new point that keeps the old agent and"
                  " adopts this plan", file=sys.stderr)
            return 2
        p = Point(name=f"{p.name}+{plan.fingerprint[:8]}",
                  created=dt.datetime.now(dt.UTC).isoformat(), plan=plan, agent=p.agent)
        print(f"adopting the new plan ({len(changes)} change(s)) as point {p.name}")
    versions = [Version("baseline", baseline_model, p.agent),
                Version("current", current_model, ref=asked_model(settings, args))]
    try:
        validate_versions(cases, versions)  # before anything is written
    except (PlanMismatch, FrozenAgentError) as exc:
        print(f"point {p.name} can no longer run: {exc}", file=sys.stderr)
        return 2
    print_start(f"{p.agent.model} (point {p.name}) vs {current_model.model_id}", cases,
                 plan.repeat, settings, versions=2)
    progress = progress_bar(len(cases) * plan.repeat * 2)
    try:
        async with prepared(settings) as prep:
            if p.name != args.name:
                await prep.store.save_point(p)
            records = await run_versions(
                prep, cases, versions, plan,
                concurrency=args.concurrency, vision=env_bool("EVAL_VISION"), judge=judge,
                progress=progress, settings_extra=pack_settings(judge), point=p.name)
            result = compare_runs(records["baseline"], records["current"])
            cid = await prep.store.save_comparison(
                p.name, records["baseline"].run_id or "", records["current"].run_id or "",
                result)
    except (PlanMismatch, FrozenAgentError) as exc:
        print(f"point {p.name} can no longer run: {exc}", file=sys.stderr)
        return 2
    finally:
        progress(None)
    print(render(result, f"point {p.name} ({p.agent.model}, agent {p.agent.fingerprint[:8]},"
                         f" run {records['baseline'].run_id})",
                 f"today ({current_model.model_id}, run {records['current'].run_id})"))
    print(f"comparison {cid} stored")
    return 0


# gate ----------------------------------------------------------------------------------------

def gate(args: argparse.Namespace) -> int:
    try:
        cases = selected_cases(args)
    except CaseFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    against = None
    if args.against:
        try:
            against = store_value(lambda s: _load_point(s, args.against))
        except StoreError as exc:
            print(exc, file=sys.stderr)
            return 2
    models = [args.model] + ([point_ref(against.agent)] if against else [])
    return with_models(args, cases, models, lambda s: _gate(s, cases, args, against))


async def _gate(settings: Settings, cases: list[Case], args: argparse.Namespace,
                against: Point | None) -> int:
    from evals.execute.session import PlanMismatch, Version, prepared, run_versions
    from evals.report.compare import compare_runs
    from evals.report.gate import HARD_FILES
    from evals.report.gate import gate as apply_gate
    from evals.report.gate import render as render_gate

    hard = tuple(h.strip() for h in args.hard.split(",") if h.strip()) if args.hard \
        else HARD_FILES
    # A baseline model is made up front for the point asked for; one found later, for the same
    # model and plan, is this very model.
    refs = [args.model] + ([point_ref(against.agent)] if against is not None else [])
    started = start_models(settings, cases, args, *refs)
    if started is None:
        return 2
    models, judge = started
    model = models[0]
    plan = plan_for(cases, judge, 2, selection_spec(args))
    progress = progress_bar(len(cases) * 2 * (2 if against else 1))
    async with prepared(settings) as prep:
        # The gate always runs twice; a point's plan is compared with its own repetitions.
        if against is None:
            for repeat in (1, 2):
                same = plan_for(cases, judge, repeat, selection_spec(args))
                against = against or await prep.store.find_point(model.model_id,
                                                                 same.fingerprint)
            if against is not None:
                print(f"comparing against point {against.name} (same model and plan)")
        else:
            same = plan_for(cases, judge, against.plan.repeat, selection_spec(args))
            if against.plan.fingerprint != same.fingerprint:
                print(f"point {against.name} has another plan; regressions cannot be paired:",
                      file=sys.stderr)
                for line in plan_changes(against.plan, same):
                    print(f"  {line}", file=sys.stderr)
                return 2
        versions = [Version("current", model, ref=asked_model(settings, args))]
        if against is not None:
            baseline = models[1] if len(models) > 1 else model
            versions.insert(0, Version("baseline", baseline, against.agent))
        print_start(model.model_id, cases, 2, settings, versions=len(versions))
        try:
            records = await run_versions(prep, cases, versions, plan,
                                         concurrency=args.concurrency,
                                         vision=env_bool("EVAL_VISION"), judge=judge,
                                         progress=progress,
                                         settings_extra={"gate": True, **pack_settings(judge)},
                                         point=against.name if against else None)
        except PlanMismatch as exc:
            print(exc, file=sys.stderr)
            return 2
        finally:
            progress(None)
        comparison = compare_runs(records["baseline"], records["current"]) \
            if against is not None else None
    record = records["current"]
    report_run(record)
    write_record(record, args.artifact)
    result = apply_gate(record.cases, hard, comparison)
    print()
    print(render_gate(result))
    return 0 if result.passed else 1
