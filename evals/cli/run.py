"""The commands that run the suite and keep what they ran: run (the default), resume, runs,
list, needs-local-model. What they run is evals.api's; these parse, call and print."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from pathlib import Path

from app.localmodel import uses_local_model
from app.settings import Settings, get_settings
from evals.api import RunResult, rerun_failed, resume, run
from evals.api.options import Endpoint
from evals.api.setup import in_store, open_store
from evals.cli.common import (
    CliError,
    Commands,
    add_item_flags,
    add_ray_flag,
    add_run_flags,
    add_spend_flags,
    flagged,
    positive,
    repetitions,
    run_options,
    say_capped,
)
from evals.cli.suites import SUITES, run_suite
from evals.load.cases import CaseFileError, load_cases
from evals.record.artifact import ArtifactError, read_run
from evals.report.console import report_run
from evals.settings import eval_settings


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
    add_spend_flags(run)  # unstarted cases are SKIPPED and the exit is 1
    run.set_defaults(handler=run_command)
    res = sub.add_parser("resume", help="run what an interrupted run left, into that run")
    res.add_argument("run", nargs="?", help="the run id (default: the newest interrupted one)")
    res.add_argument("--concurrency", type=positive, default=env.concurrency)
    res.add_argument("--artifact", type=Path, default=None)
    res.add_argument("--fail-on-skip", action=argparse.BooleanOptionalAction, default=None)
    add_spend_flags(res, default=False)
    add_ray_flag(res)
    res.set_defaults(handler=resume_command)
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
        if not args.endpoint_model:
            raise CliError("--endpoint needs --endpoint-model")
        # EVAL_MODEL and EVAL_RAY_ADDRESS name the app's model and cluster: not asked here
        options = dataclasses.replace(
            options, endpoint=Endpoint(args.endpoint, args.endpoint_model),
            model=options.model if flagged(args, "model") else None,
            ray=options.ray if flagged(args, "ray") else None)
    elif args.endpoint_model:
        raise CliError("--endpoint-model names the model an --endpoint serves: give --endpoint")
    return finished(run(options))


def finished(result: RunResult) -> int:
    """A run's report, where its record went, and how it ended; its exit code."""
    record = result.record
    report_run(record)
    print(f"run: {record.run_id} ({'not all stored' if result.store_failed else 'stored'}) ·"
          f" artifact: {result.artifact}")
    if result.store_failed:
        print(f"error: {result.store_failed}; the artifact has every finished case:"
              f" python -m evals runs --import {result.artifact} puts them there",
              file=sys.stderr)
    if result.junit:
        print(f"junit: {result.junit}")
    if record.status == "interrupted":
        print(f"interrupted: {len(record.cases)} finished, {len(record.unfinished)} not run;"
              f" python -m evals resume {record.run_id} runs the rest", file=sys.stderr)
    else:
        say_capped(record)
    return result.exit_code


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


def resume_command(args: argparse.Namespace) -> int:
    """`python -m evals resume [RUN]`: run what an interrupted run left, into the same run."""
    return finished(resume(args.run, concurrency=args.concurrency, artifact=args.artifact,
                           fail_on_skip=args.fail_on_skip, max_cost=args.max_cost,
                           allow_unpriced=args.allow_unpriced,
                           ray=args.ray))


def run_failed(args: argparse.Namespace) -> int:
    """`python -m evals run --failed [RUN]`: the items that did not pass in a stored run, run
    again as a new run under that run's plan (evals.api.rerun_failed)."""
    given = [name for name, value in (
        ("a case file", args.case_file), ("--cases/EVAL_CASES", args.cases),
        ("--group/EVAL_GROUPS", args.group), ("--cases-only", args.cases_only),
        ("--scenarios-only", args.scenarios_only), ("--endpoint", args.endpoint),
        ("--suite", args.suite)) if value]
    if given:
        raise CliError(f"run --failed takes its items from the run; leave out {', '.join(given)}")
    result = rerun_failed(args.failed, run_options(args))
    return 0 if result is None else finished(result)


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

