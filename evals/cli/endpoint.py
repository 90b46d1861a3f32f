"""`python -m evals run --endpoint URL --endpoint-model ID`: the cases sent to any
OpenAI-compatible endpoint, nothing composed (evals/execute/endpoint.py)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from app.chat.models import ModelCallError
from app.chat.openai_wire import OpenAICompatModel
from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings, get_settings
from evals.api.options import RunOptions
from evals.api.setup import calibrate_new_judge, judge_setup, run_closing
from evals.cli.common import CliError
from evals.execute.endpoint import run_endpoint
from evals.judge.trust import JudgesFileError
from evals.load.cases import Case, CaseFileError, load_cases
from evals.load.selection import select_cases
from evals.record.artifact import write_run
from evals.record.results import Totals
from evals.record.run import Models, RunRecord
from evals.report.console import exit_code, print_report
from evals.settings import DEFAULT_CONCURRENCY, eval_settings


def run_endpoint_command(args: argparse.Namespace, options: RunOptions) -> int:
    if not args.endpoint_model:
        raise CliError("--endpoint needs --endpoint-model")
    try:  # an endpoint is sent cases; scenarios need the app
        source = options.selection.file
        cases = select_cases(load_cases(Path(source)) if source else load_cases(),
                             options.selection)
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not cases:
        raise CliError("nothing selected to run")
    base = get_settings()
    local = any(c.judged for c in cases) and uses_local_model(base, options.judge.model, "judge")
    try:
        with local_model_settings(base, local) as settings:
            calibrate_new_judge(settings, cases, options.judge,
                                options.concurrency or DEFAULT_CONCURRENCY)
            return run_closing(_run(cases, args, options, settings))
    except LocalModelError as exc:
        raise CliError(f"local model: {exc}") from exc


async def _run(cases: list[Case], args: argparse.Namespace, options: RunOptions,
               settings: Settings) -> int:
    key = eval_settings().endpoint_api_key
    model = OpenAICompatModel(f"openai/{args.endpoint_model}", api_base=args.endpoint,
                              api_key=key.get_secret_value() if key else "none",
                              timeout_s=settings.model_timeout_s,
                              retries=settings.model_retries)
    try:
        judge = judge_setup(settings, cases, options.judge)
    except (ModelCallError, JudgesFileError) as exc:
        raise CliError(f"cannot start: {exc}") from exc
    print(f"endpoint: {args.endpoint} ({args.endpoint_model}) · {len(cases)} cases")
    started = dt.datetime.now(dt.UTC)
    results = await run_endpoint(cases, model, judge,
                                 concurrency=options.concurrency or DEFAULT_CONCURRENCY)
    forced = bool(judge and judge.forced and not judge.trust.trusted)
    print_report(results, sys.stdout, trusted_by_flag=forced)
    record = RunRecord(started=started.isoformat(), ended=dt.datetime.now(dt.UTC).isoformat(),
                       models=Models(endpoint=f"{args.endpoint_model} at {args.endpoint}",
                                     judge=judge.model.model_id if judge else None),
                       judge_trusted_by_flag=forced, totals=Totals.of(results), cases=results)
    print(f"artifact: {write_run(record, options.artifact)}")
    return exit_code(results, fail_on_skip=options.fails_on_skip)
