"""The command that says what a change touches before it is run: impact (evals.api.impact)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.api.changes import what_changes
from evals.api.options import JudgeChoice, RunOptions
from evals.cli.common import Commands, repetitions
from evals.record.fingerprint import Selection
from evals.record.repetitions import RepeatRule
from evals.report.impact import NO_BASELINE, render
from evals.settings import eval_settings


def register(sub: Commands) -> None:
    env = eval_settings()
    p = sub.add_parser("impact", help="what a change touches, before the run: per context,"
                       " the changed fragments and tools, and the items they affect")
    p.add_argument("case_file", nargs="?", type=Path,
                   help="a case file or folder, as the run would be given")
    p.add_argument("--against", metavar="POINT|RUN",
                   help="a comparison point, or a stored run (an id or a unique prefix);"
                        " default: the last complete run under today's plan")
    p.add_argument("--cases", default=env.cases,
                   help="comma list of case files (without .yaml) or case ids (EVAL_CASES)")
    p.add_argument("--group", default=env.groups,
                   help="comma list of case groups (EVAL_GROUPS)")
    p.add_argument("--model", default=env.model, help="today's chat model (EVAL_MODEL)")
    p.add_argument("--judge-model", default=env.judge_model,
                   help="the judge (EVAL_JUDGE_MODEL; default: job judge, MODEL_JUDGE)")
    p.add_argument("--judge", dest="judge_pack", metavar="PACK/NAME",
                   help="the evaluator pack prompt the run would rate judged cases with")
    p.add_argument("--repeat", type=repetitions, default=env.repeat,
                   help="the run's repetitions, K or auto[:MAX] (EVAL_REPEAT): part of the"
                        " plan")
    kinds = p.add_mutually_exclusive_group()
    kinds.add_argument("--cases-only", action="store_true", help="no scenario")
    kinds.add_argument("--scenarios-only", action="store_true", help="no single-turn case")
    p.add_argument("--full", action="store_true",
                   help="scenarios in every visitor style they allow")
    p.set_defaults(handler=impact_command)


def impact_command(args: argparse.Namespace) -> int:
    """`python -m evals impact [--against POINT|RUN]`: today's selection, its plan and agent,
    against a baseline (evals.api.impact); no model is started or called."""
    selection = Selection.of(
        args.cases, args.group, file=str(args.case_file) if args.case_file else None,
        only="cases" if args.cases_only else "scenarios" if args.scenarios_only else None,
        full=args.full)
    rule = args.repeat if isinstance(args.repeat, RepeatRule) else None
    options = RunOptions(selection=selection, model=args.model,
                         judge=JudgeChoice(args.judge_model, args.judge_pack),
                         repeat=rule.max if rule else args.repeat, rule=rule)
    found = what_changes(options, against=args.against)
    if found is None:
        print(NO_BASELINE)
        return 0
    for line in render(found):
        print(line)
    return 0
