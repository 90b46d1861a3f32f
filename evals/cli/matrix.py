"""`python -m evals matrix`: many versions on one plan, in one table. What it runs is
evals.api's; this parses, calls and prints."""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.api.matrix import Matrixed, matrix, matrix_runs
from evals.cli.common import (
    CliError,
    Commands,
    add_item_flags,
    add_run_flags,
    add_spend_flags,
    flagged,
    repetitions,
    run_options,
    say_capped,
)
from evals.record.artifact import write_atomically
from evals.report.html import render_matrix
from evals.report.matrix import render
from evals.settings import eval_settings


def _names(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def register(sub: Commands) -> None:
    p = sub.add_parser("matrix", help="many versions (models, points) on one plan, one table")
    p.add_argument("--models", help="comma list of chat models: today's agent on each")
    p.add_argument("--points", help="comma list of comparison points: each one's frozen agent")
    p.add_argument("--runs", help="comma list of stored runs of one plan: table them again,"
                                  " calling no model")
    p.add_argument("--baseline", help="the column every other is paired with (a model, point"
                                      " or run as given; default: the first)")
    p.add_argument("--html", type=Path, help="also write the matrix as a page")
    add_run_flags(p, model_help="not for a matrix: use --models")
    add_spend_flags(p)
    add_item_flags(p)
    p.add_argument("--repeat", type=repetitions, default=eval_settings().repeat,
                   metavar="K|auto[:MAX]")
    p.set_defaults(handler=matrix_command)


def matrix_command(args: argparse.Namespace) -> int:
    if args.html is not None and not args.html.parent.is_dir():
        raise CliError(f"--html {args.html}: no folder {args.html.parent} to write it in")
    if flagged(args, "model"):
        raise CliError("matrix takes --models A,B,… (one column each), not --model")
    if args.runs:
        if args.models or args.points:
            raise CliError("--runs tables stored runs; it takes no --models or --points")
        result = matrix_runs(_names(args.runs), baseline=args.baseline)
    else:
        asked = [f"--{n}" for n in ("cases", "group", "repeat") if flagged(args, n)]
        asked += [f"--{n.replace('_', '-')}" for n in ("cases_only", "scenarios_only", "full")
                  if getattr(args, n)]
        if args.points and asked:
            raise CliError(f"with --points, the points' own plan says what runs and how often;"
                           f" {', '.join(asked)} would change it (save points of another plan"
                           " for that)")
        result = matrix(_names(args.models), _names(args.points), run_options(args),
                        baseline=args.baseline)
    return _say(result, args.html)


def _say(result: Matrixed, html: Path | None) -> int:
    print(render(result.result))
    if html is not None:
        try:
            write_atomically(html, render_matrix(result.result, result.records))
        except OSError as exc:
            raise CliError(f"--html {html}: {exc.strerror or exc} (the runs are stored:"
                           " `matrix --runs` tables them again)") from exc
        print(f"report: {html}")
    say_capped(*result.records.values())
    if result.store_failed:
        print(f"error: {result.store_failed}; the runs are not all stored")
    return result.exit_code
