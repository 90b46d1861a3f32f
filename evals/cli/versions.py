"""The commands that compare agent versions: point, compare, gate. What they run is
evals.api's; these parse, call and print."""

from __future__ import annotations

import argparse
import sys

from evals.api import compare as compare_point
from evals.api import compare_runs, gate, list_points, load_point, point_from_run, save_point
from evals.api.pairing import Compared
from evals.cli.common import (
    CliError,
    Commands,
    add_item_flags,
    add_run_flags,
    add_spend_flags,
    repetitions,
    run_options,
    say_capped,
)
from evals.report.compare import render
from evals.report.console import report_run
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
    save.set_defaults(handler=save_point_command)
    psub.add_parser("list", help="the saved points").set_defaults(handler=list_points_command)
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
    add_spend_flags(cmp_)
    cmp_.set_defaults(handler=compare_command)
    gate_ = sub.add_parser("gate", help="the gate for a model switch or a prompt change")
    add_run_flags(gate_, model_help="the model to gate (EVAL_MODEL)")
    add_spend_flags(gate_)
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
    gate_.set_defaults(handler=gate_command)


# points --------------------------------------------------------------------------------------

def save_point_command(args: argparse.Namespace) -> int:
    if args.from_run:
        point_from_run(args.name, args.from_run)
    else:
        save_point(args.name, run_options(args))
    return 0


def list_points_command(args: argparse.Namespace) -> int:
    rows = list_points()
    if not rows:
        print("no comparison points yet: python -m evals point save NAME")
    for r in rows:
        print(f"{r.name:<24} {r.created_at:%Y-%m-%d %H:%M}  {r.model or '?':<40}"
              f" plan {r.plan_fingerprint[:8]} agent {r.agent_fingerprint[:8]}")
    return 0


def show_point(args: argparse.Namespace) -> int:
    p = load_point(args.name)
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


# compare -------------------------------------------------------------------------------------

def compare_command(args: argparse.Namespace) -> int:
    if args.runs:
        result = compare_runs(*args.runs)
        base, cur = result.baseline, result.current
        print(render(result.result, f"run {base.run_id} ({base.models.chat})",
                     f"run {cur.run_id} ({cur.models.chat})"))
        return _stored(result)
    if not args.name:
        raise CliError("compare needs a point NAME, or --runs A B")
    result = compare_point(args.name, run_options(args), adopt_plan=args.adopt_plan)
    p = result.point
    assert p is not None
    print(render(result.result, f"point {p.name} ({p.agent.model}, agent"
                                f" {p.agent.fingerprint[:8]}, run {result.baseline.run_id})",
                 f"today ({result.current.models.chat}, run {result.current.run_id})"))
    say_capped(result.baseline, result.current)
    return _stored(result)


def _stored(result: Compared) -> int:
    if result.comparison_id is None:
        print(f"error: {result.store_failed}; the comparison is not stored", file=sys.stderr)
    else:
        print(f"comparison {result.comparison_id} stored")
    return result.exit_code


# gate ----------------------------------------------------------------------------------------

def gate_command(args: argparse.Namespace) -> int:
    hard = tuple(h.strip() for h in args.hard.split(",") if h.strip()) if args.hard else None
    result = gate(run_options(args), against=args.against, hard=hard,
                  max_cost_increase=args.max_cost_increase,
                  max_p95_increase=args.max_p95_increase)
    report_run(result.record)
    print()
    print(render_gate(result.result))
    say_capped(result.record)
    if result.store_failed:
        print(f"error: {result.store_failed}; the artifact has the run: python -m evals runs"
              f" --import {result.artifact} puts it there", file=sys.stderr)
    return result.exit_code
