"""`python -m evals run --suite NAME --file F --endpoint URL --endpoint-model ID`: a public set
run against an OpenAI-compatible endpoint instead of the cases, with the report, exit code and
artifact of a run. mrbench: each tutoring dialogue's reply judged on MRBench's dimensions;
gsm8k: each word problem's answer checked exactly (no judge)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from app.chat.models import ChatModel
from app.settings import get_settings
from evals.api.options import Endpoint
from evals.api.runs import endpoint_model
from evals.api.setup import rate_with_judge, run_closing
from evals.calibration import gsm8k, mrbench
from evals.calibration.calibrate import CalibrationError
from evals.cli.common import CliError, flagged
from evals.judge import TUTORING
from evals.judge.trust import JudgesFileError, trust
from evals.record.artifact import write_run
from evals.record.results import CaseResult, Totals
from evals.record.run import Models, RunRecord, RunSettings
from evals.report.console import exit_code, print_report
from evals.report.junit import write_junit
from evals.settings import DEFAULT_CONCURRENCY

SUITES = ("mrbench", "gsm8k")
FILES = {"mrbench": "MRBench_V2.json", "gsm8k": "GSM8K's test.jsonl"}


def run_suite(args: argparse.Namespace) -> int:
    """`run --suite mrbench|gsm8k --file PATH [--limit N] --endpoint URL --endpoint-model ID`."""
    if not (args.endpoint and args.endpoint_model and args.suite_file):
        raise CliError(f"--suite {args.suite} needs --file PATH ({FILES[args.suite]}),"
                       " --endpoint URL and --endpoint-model ID")
    if args.limit < 1:
        raise CliError("--limit must be at least 1")
    refused = [flag for flag, given in (
        ("--repeat", flagged(args, "repeat")), ("--max-cost", flagged(args, "max_cost")),
        ("--ray", flagged(args, "ray")), ("--model", flagged(args, "model")),
        ("a case file", args.case_file is not None), ("--cases", flagged(args, "cases")),
        ("--group", flagged(args, "group"))) if given]
    if refused:  # never ignored in silence: a suite run is one pass over its file's items
        raise CliError(f"--suite {args.suite} runs each of its items once against the endpoint,"
                       f" uncached, in this process: leave out {', '.join(refused)}")
    if args.suite == "gsm8k":
        return _gsm8k(args)
    return _mrbench(args)


def _endpoint(args: argparse.Namespace) -> ChatModel:
    return endpoint_model(Endpoint(args.endpoint, args.endpoint_model), get_settings())


def _finish(args: argparse.Namespace, started: dt.datetime, results: list[CaseResult],
            judge: str | None = None, forced: bool = False) -> int:
    """The run's report and artifact, and its exit code."""
    print_report(results, sys.stdout, trusted_by_flag=forced)
    record = RunRecord(
        started=started.isoformat(), ended=dt.datetime.now(dt.UTC).isoformat(),
        models=Models(endpoint=f"{args.endpoint_model} at {args.endpoint}", judge=judge),
        judge_trusted_by_flag=forced,
        settings=RunSettings(suite=args.suite, suite_file=args.suite_file.name,
                             limit=args.limit,
                             judge_prompt_hash=TUTORING.hash() if judge else None),
        totals=Totals.of(results), cases=results)
    print(f"artifact: {write_run(record, args.artifact)}")
    if args.junit:
        print(f"junit: {write_junit(record, args.junit)}")
    return exit_code(results, fail_on_skip=False)


def _gsm8k(args: argparse.Namespace) -> int:
    try:
        problems = gsm8k.load_problems(args.suite_file, args.limit)
    except CalibrationError as exc:
        raise CliError(str(exc)) from exc
    endpoint = _endpoint(args)
    print(f"endpoint: {args.endpoint} ({args.endpoint_model}) · {len(problems)} GSM8K"
          " problems, answers checked exactly")
    started = dt.datetime.now(dt.UTC)
    results = run_closing(gsm8k.run_suite(problems, endpoint,
                                          concurrency=args.concurrency or DEFAULT_CONCURRENCY))
    return _finish(args, started, results)


def _mrbench(args: argparse.Namespace) -> int:
    try:
        dialogues = mrbench.load_dialogues(args.suite_file, args.limit)
    except CalibrationError as exc:
        raise CliError(str(exc)) from exc
    endpoint = _endpoint(args)
    started = dt.datetime.now(dt.UTC)
    trusted: list[bool] = []

    async def rate(model: ChatModel, parallel: int) -> list[CaseResult]:
        try:
            found = trust(model.model_id, TUTORING.hash())
        except JudgesFileError as exc:
            found = None
            print(exc, file=sys.stderr)
        trusted.append(bool(found and found.trusted))
        decides = bool(args.trust_judge or trusted[0])
        print(f"judge: {'decides' if decides else 'advisory (verdicts stay UNDECIDED)'}"
              + (f": {found.reason}" if found else ""))
        concurrency = args.concurrency or DEFAULT_CONCURRENCY
        return await mrbench.run_suite(dialogues, endpoint, model, decides,
                                       concurrency=max(1, min(concurrency, parallel * 2)))

    judge_id, results = rate_with_judge(
        args.judge_model, f"{len(dialogues)} MRBench dialogues from {args.endpoint}"
        f" ({args.endpoint_model}) × {len(mrbench.DIMENSIONS)} dimensions", rate)
    forced = bool(args.trust_judge and not (trusted and trusted[0]))
    return _finish(args, started, results, judge_id, forced)
