"""`python -m evals`: run the suite (`make eval`), re-score a run, or list the cases.

    python -m evals [run] [--cases FILE_OR_ID,...] [--model ID] [--concurrency N]
    python -m evals rescore evals/.last-run.json
    python -m evals list

Every flag has an environment variable: EVAL_CASES, EVAL_MODEL, EVAL_CONCURRENCY, EVAL_VISION.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

from app.settings import MODEL_JOBS, get_settings
from evals.cases import CaseFileError, load_cases, select
from evals.report import ARTIFACT, exit_code, print_report, write_artifact
from evals.runner import DEFAULT_CONCURRENCY, MAX_ATTEMPTS

# Settings that would point the app at live data: the evals blank them and say so.
LIVE_DATA_SETTINGS = ("catalog_source", "blob_base_url", "blob_dir")


def _env_bool(name: str) -> bool | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    return value.strip().lower() in ("1", "true", "yes", "on")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command")
    run = sub.add_parser("run", help="run the suite (the default)")
    run.add_argument("case_file", nargs="?", type=Path,
                     help="a case file or folder to run instead of evals/cases/")
    run.add_argument("--endpoint", help="an OpenAI-compatible base URL: send each case there"
                     " directly (no app composition)")
    run.add_argument("--endpoint-model", help="the model id the endpoint serves")
    run.add_argument("--cases", default=os.environ.get("EVAL_CASES"),
                     help="comma list of case files (without .yaml) or case ids (EVAL_CASES)")
    run.add_argument("--model", default=os.environ.get("EVAL_MODEL"),
                     help="the chat model for this run, a litellm id (EVAL_MODEL)")
    run.add_argument("--judge-model", default=os.environ.get("EVAL_JUDGE_MODEL"),
                     help="the judge for rubric/must_not cases (EVAL_JUDGE_MODEL; default: job"
                          " judge, MODEL_JUDGE)")
    run.add_argument("--concurrency", type=int,
                     default=int(os.environ.get("EVAL_CONCURRENCY") or DEFAULT_CONCURRENCY),
                     help=f"cases in flight at once (EVAL_CONCURRENCY, default "
                          f"{DEFAULT_CONCURRENCY})")
    run.add_argument("--artifact", type=Path, default=ARTIFACT)
    re_ = sub.add_parser("rescore", help="re-check a run's recorded answers, no model call")
    re_.add_argument("artifact", type=Path)
    sub.add_parser("list", help="list the cases")
    cal = sub.add_parser("calibrate", help="check the judge against people's verdicts")
    cal.add_argument("results", nargs="?", type=Path, help="a run artifact with judged cases")
    cal.add_argument("labels", nargs="?", type=Path, help='{"case-id": "pass" | "fail"}')
    cal.add_argument("--set", choices=["mrbench"], help="a rated public set instead")
    cal.add_argument("--file", type=Path, help="the set's data file (MRBench_V2.json)")
    cal.add_argument("--judge-model", default=os.environ.get("EVAL_JUDGE_MODEL"))
    cal.add_argument("--limit", type=int, default=30, help="tutor replies to rate")
    cal.add_argument("--json", action="store_true", help="print JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        args = _parser().parse_args(["run", *(argv or sys.argv[1:])])
    if args.command == "calibrate":
        return _calibrate(args)
    try:
        source = getattr(args, "case_file", None)
        cases = load_cases(source) if source else load_cases()
    except CaseFileError as exc:
        print("case files have errors:", file=sys.stderr)
        for line in exc.errors:
            print(f"  {line}", file=sys.stderr)
        return 2
    if args.command == "list":
        for c in cases:
            print(f"{c.where:<32} {c.id}")
        print(f"{len(cases)} cases")
        return 0
    if args.command == "rescore":
        from evals.rescore import load_artifact, rescore

        try:
            results = rescore(load_artifact(args.artifact), cases)
        except CaseFileError as exc:
            print(exc, file=sys.stderr)
            return 2
        print_report(results, sys.stdout)
        return exit_code(results)
    try:
        selected = select(cases, args.cases)
    except CaseFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.concurrency < 1:
        print("--concurrency (EVAL_CONCURRENCY) must be at least 1", file=sys.stderr)
        return 2
    if args.endpoint:
        if not args.endpoint_model:
            print("--endpoint needs --endpoint-model", file=sys.stderr)
            return 2
        from app.localmodel import local_model_settings
        from app.localmodel.server import LocalModelError

        base = get_settings()
        try:
            with local_model_settings(base, _judge_is_local(base, selected,
                                                            args.judge_model)) as settings:
                return asyncio.run(_run_endpoint(selected, args, settings))
        except LocalModelError as exc:
            print(f"local model: {exc}", file=sys.stderr)
            return 2
    settings = get_settings()
    blanked = [n.upper() for n in LIVE_DATA_SETTINGS if getattr(settings, n)]
    settings = settings.model_copy(update={n: None for n in LIVE_DATA_SETTINGS})
    if blanked:
        print(f"note: {', '.join(blanked)} ignored: evals run on the fixture catalogue and the"
              " fixture manuals only")
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError

    chat_local = uses_local_model(settings, args.model)
    judge_local = _judge_is_local(settings, selected, args.judge_model)
    if chat_local and "EVAL_CONCURRENCY" not in os.environ \
            and args.concurrency == DEFAULT_CONCURRENCY:
        args.concurrency = settings.local_model_parallel  # one case per server slot
    try:
        with local_model_settings(settings, chat_local or judge_local) as settings:
            return asyncio.run(_run(selected, args, settings))
    except LocalModelError as exc:
        print(f"local model: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


async def _run(cases: list[Any], args: argparse.Namespace, settings: Any) -> int:
    from app.chat.models import ModelCallError, model_for_job
    from app.db import resolve_conninfo
    from app.manuals.embed import default_embedder
    from evals.harness import eval_env
    from evals.runner import run_suite

    try:
        model = model_for_job(settings, "chat", args.model)
        judge_model = model_for_job(settings, "judge", args.judge_model) \
            if any(c.judged for c in cases) else None
    except ModelCallError as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return 2
    if judge_model is not None:
        print(f"judge: {judge_model.model_id} (for {sum(c.judged for c in cases)} judged"
              " cases, one call per judged attempt)")
    calls_max = len(cases) * (settings.max_tool_steps + 1) * MAX_ATTEMPTS
    print(f"model: {model.model_id} · {len(cases)} cases · at least {len(cases)} model calls"
          f" (one per case), at most {calls_max} (every tool step, every retry)")
    started = dt.datetime.now(dt.UTC)
    url = settings.database_url.get_secret_value() if settings.database_url else None
    progress = _progress(len(cases))
    async with eval_env(resolve_conninfo(url, settings.data_dir), settings,
                        default_embedder()) as env:
        results = await run_suite(env, cases, model, concurrency=args.concurrency,
                                  vision=_env_bool("EVAL_VISION"), judge_model=judge_model,
                                  on_done=lambda r: progress(r.id))
    progress(None)
    print_report(results, sys.stdout)
    meta = {
        "started": started.isoformat(),
        "ended": dt.datetime.now(dt.UTC).isoformat(),
        "models": {"chat": model.model_id,
                   **{job: settings.model_for(job) for job in MODEL_JOBS if job != "chat"}},
        "judge_model": judge_model.model_id if judge_model else None,
        "concurrency": args.concurrency,
        "selection": args.cases,
    }
    path = write_artifact(results, meta, args.artifact)
    print(f"artifact: {path}")
    return exit_code(results)


def _judge_is_local(settings: Any, cases: list[Any], judge_model: str | None) -> bool:
    """Whether the run has judged cases and their judge is the embedded model."""
    from app.localmodel import uses_local_model

    return any(c.judged for c in cases) and uses_local_model(settings, judge_model, "judge")


async def _run_endpoint(cases: list[Any], args: argparse.Namespace, settings: Any) -> int:
    from app.chat.models import LiteLLMModel, ModelCallError, model_for_job
    from evals.endpoint import run_endpoint

    model = LiteLLMModel(f"openai/{args.endpoint_model}", api_base=args.endpoint,
                         api_key=os.environ.get("ENDPOINT_API_KEY") or "none",
                         timeout_s=settings.model_timeout_s, retries=settings.model_retries)
    judge_model = None
    if any(c.judged for c in cases):
        try:
            judge_model = model_for_job(settings, "judge", args.judge_model)
        except ModelCallError as exc:
            print(f"cannot start: {exc}", file=sys.stderr)
            return 2
    print(f"endpoint: {args.endpoint} ({args.endpoint_model}) · {len(cases)} cases")
    started = dt.datetime.now(dt.UTC)
    results = await run_endpoint(cases, model, judge_model, concurrency=args.concurrency)
    print_report(results, sys.stdout)
    meta = {"started": started.isoformat(), "ended": dt.datetime.now(dt.UTC).isoformat(),
            "models": {"endpoint": f"{args.endpoint_model} at {args.endpoint}"},
            "judge_model": judge_model.model_id if judge_model else None}
    print(f"artifact: {write_artifact(results, meta, args.artifact)}")
    return exit_code(results)


def _calibrate(args: argparse.Namespace) -> int:
    from evals.calibrate import CalibrationError, calibrate, load, render, to_json

    try:
        if args.set is None:
            if not (args.results and args.labels):
                print("calibrate needs RESULTS LABELS, or --set mrbench --file PATH",
                      file=sys.stderr)
                return 2
            rated, labels = load(args.results, args.labels)
            result = calibrate(rated, labels)
            print(to_json(result) if args.json else render(result))
            return 0
        if args.file is None:
            print("--set mrbench needs --file PATH (the MRBench V2 JSON)", file=sys.stderr)
            return 2
        return _calibrate_mrbench(args)
    except CalibrationError as exc:
        print(exc, file=sys.stderr)
        return 2


def _calibrate_mrbench(args: argparse.Namespace) -> int:
    import json as json_

    from app.chat.models import ModelCallError, model_for_job
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError
    from evals.calibrate import render, to_json
    from evals.mrbench import DIMENSIONS, load_items, rate, report

    items = load_items(args.file, args.limit)
    settings = get_settings()
    try:
        with local_model_settings(settings, uses_local_model(settings, args.judge_model,
                                                             "judge")) as settings:
            model = model_for_job(settings, "judge", args.judge_model)
            print(f"judge: {model.model_id} · {len(items)} tutor replies × {len(DIMENSIONS)}"
                  " dimensions")
            results = report(asyncio.run(rate(items, DIMENSIONS, model,
                                              settings.local_model_parallel)))
    except (LocalModelError, ModelCallError) as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.json:
        print(json_.dumps({k: json_.loads(to_json(v)) for k, v in results.items()}, indent=2))
    else:
        for name, c in results.items():
            print(render(c, f"== {name}"))
            print()
    return 0


def _progress(total: int) -> Any:
    """A progress bar on a terminal; silent otherwise."""
    if not sys.stderr.isatty():
        return lambda case_id: None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="case", file=sys.stderr, leave=False)

    def tick(case_id: str | None) -> None:
        if case_id is None:
            bar.close()
        else:
            bar.set_postfix_str(case_id)
            bar.update(1)

    return tick


if __name__ == "__main__":
    raise SystemExit(main())
