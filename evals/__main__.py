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
    run.add_argument("--cases", default=os.environ.get("EVAL_CASES"),
                     help="comma list of case files (without .yaml) or case ids (EVAL_CASES)")
    run.add_argument("--model", default=os.environ.get("EVAL_MODEL"),
                     help="the chat model for this run, a litellm id (EVAL_MODEL)")
    run.add_argument("--concurrency", type=int,
                     default=int(os.environ.get("EVAL_CONCURRENCY") or DEFAULT_CONCURRENCY),
                     help=f"cases in flight at once (EVAL_CONCURRENCY, default "
                          f"{DEFAULT_CONCURRENCY})")
    run.add_argument("--artifact", type=Path, default=ARTIFACT)
    re_ = sub.add_parser("rescore", help="re-check a run's recorded answers, no model call")
    re_.add_argument("artifact", type=Path)
    sub.add_parser("list", help="list the cases")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        args = _parser().parse_args(["run", *(argv or sys.argv[1:])])
    try:
        cases = load_cases()
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
    settings = get_settings()
    blanked = [n.upper() for n in LIVE_DATA_SETTINGS if getattr(settings, n)]
    settings = settings.model_copy(update={n: None for n in LIVE_DATA_SETTINGS})
    if blanked:
        print(f"note: {', '.join(blanked)} ignored: evals run on the fixture catalogue and the"
              " fixture manuals only")
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError

    if uses_local_model(settings, args.model) and "EVAL_CONCURRENCY" not in os.environ \
            and args.concurrency == DEFAULT_CONCURRENCY:
        args.concurrency = settings.local_model_parallel  # one case per server slot
    try:
        with local_model_settings(settings, args.model) as settings:
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
    except ModelCallError as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return 2
    calls_max = len(cases) * (settings.max_tool_steps + 1) * MAX_ATTEMPTS
    print(f"model: {model.model_id} · {len(cases)} cases · at least {len(cases)} model calls"
          f" (one per case), at most {calls_max} (every tool step, every retry)")
    started = dt.datetime.now(dt.UTC)
    url = settings.database_url.get_secret_value() if settings.database_url else None
    progress = _progress(len(cases))
    async with eval_env(resolve_conninfo(url, settings.data_dir), settings,
                        default_embedder()) as env:
        results = await run_suite(env, cases, model, concurrency=args.concurrency,
                                  vision=_env_bool("EVAL_VISION"),
                                  on_done=lambda r: progress(r.id))
    progress(None)
    print_report(results, sys.stdout)
    meta = {
        "started": started.isoformat(),
        "ended": dt.datetime.now(dt.UTC).isoformat(),
        "models": {"chat": model.model_id,
                   **{job: settings.model_for(job) for job in MODEL_JOBS if job != "chat"}},
        "judge_model": None,
        "concurrency": args.concurrency,
        "selection": args.cases,
    }
    path = write_artifact(results, meta, args.artifact)
    print(f"artifact: {path}")
    return exit_code(results)


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
