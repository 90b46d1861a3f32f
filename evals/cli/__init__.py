"""`python -m evals`: run the suite (`make eval`), compare versions, gate a change, re-score.

    python -m evals [run] [--cases FILE_OR_ID,...] [--group G] [--model ID] [--repeat K]
    python -m evals runs
    python -m evals point save NAME [--from-run RUN] | point list | point show NAME
    python -m evals compare NAME [--model ID] [--adopt-plan] | compare --runs A B
    python -m evals gate [--model ID] [--against NAME] [--hard FILES]
    python -m evals rescore [ARTIFACT] [--cases FILE_OR_DIR]
    python -m evals list [--groups]
    python -m evals accuracy [LABELLED]
    python -m evals calibrate (RESULTS LABELS | --set makerspace | --set mrbench --file F) [--save]
    python -m evals run --suite mrbench --file F [--limit N] --endpoint URL --endpoint-model ID
    python -m evals prompt [--as ROLE] [--page PATH] [--selection NAMES] [--json]
    python -m evals draft [--as ROLE] [--page PATH] [--capability NAME] [--count 8] [--out F]

Every run flag has an environment variable: EVAL_CASES, EVAL_GROUPS, EVAL_MODEL,
EVAL_CONCURRENCY, EVAL_REPEAT, EVAL_VISION, EVAL_JUDGE_MODEL, EVAL_TRUST_JUDGE,
EVAL_FAIL_ON_SKIP.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections import Counter
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from app.settings import get_settings
from evals.cli.runs import (
    env_bool,
    fail_on_skip,
    judge_setup,
    run_closing,
)
from evals.execute.runner import DEFAULT_CONCURRENCY
from evals.judge.trust import JUDGES_FILE
from evals.load.cases import (
    CASES_DIR,
    CaseFileError,
    load_cases,
    load_cases_by_file,
    select,
    select_groups,
)
from evals.report.console import ARTIFACT, exit_code, print_report, write_artifact

T = TypeVar("T")


def _run_options(p: argparse.ArgumentParser, *, model_help: str) -> None:
    """The flags every command that runs cases shares."""
    p.add_argument("--cases", default=os.environ.get("EVAL_CASES"),
                   help="comma list of case files (without .yaml) or case ids (EVAL_CASES)")
    p.add_argument("--group", default=os.environ.get("EVAL_GROUPS"),
                   help="comma list of case groups (EVAL_GROUPS)")
    p.add_argument("--model", default=os.environ.get("EVAL_MODEL"), help=model_help)
    p.add_argument("--judge-model", default=os.environ.get("EVAL_JUDGE_MODEL"),
                   help="the judge for rubric/must_not cases (EVAL_JUDGE_MODEL; default: job"
                        " judge, MODEL_JUDGE)")
    p.add_argument("--judge", dest="judge_pack", metavar="PACK/NAME",
                   help="rate every judged case with this evaluator pack's prompt instead of"
                        " its own rubric (packs: evals/judge/packs/)")
    p.add_argument("--concurrency", type=int,
                   default=int(os.environ.get("EVAL_CONCURRENCY") or DEFAULT_CONCURRENCY),
                   help=f"cases in flight at once (EVAL_CONCURRENCY, default "
                        f"{DEFAULT_CONCURRENCY})")
    p.add_argument("--trust-judge", action="store_true",
                   default=bool(env_bool("EVAL_TRUST_JUDGE")),
                   help="let an uncalibrated judge decide cases (EVAL_TRUST_JUDGE); the"
                        " report and the artifact say so")
    p.add_argument("--fail-on-skip", action=argparse.BooleanOptionalAction,
                   default=env_bool("EVAL_FAIL_ON_SKIP"),
                   help="a skipped case makes the exit non-zero (EVAL_FAIL_ON_SKIP; on by"
                        " default when EVAL_MODEL or --model is set)")
    p.add_argument("--artifact", type=Path, default=ARTIFACT)


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
    run.add_argument("--suite", choices=["mrbench"],
                     help="run a public rated set instead of the cases: mrbench sends each"
                          " MRBench dialogue to --endpoint and judges the tutor's reply on"
                          " MRBench's dimensions")
    run.add_argument("--file", dest="suite_file", type=Path,
                     help="the suite's data file (MRBench_V2.json)")
    run.add_argument("--limit", type=int, default=20, help="dialogues to run (default 20)")
    _run_options(run, model_help="the chat model for this run, a litellm id (EVAL_MODEL)")
    run.add_argument("--repeat", type=int, default=int(os.environ.get("EVAL_REPEAT") or 1),
                     help="run each case K independent times (EVAL_REPEAT, default 1)")
    run.add_argument("--junit", type=Path, help="also write JUnit XML for CI systems")
    kinds = run.add_mutually_exclusive_group()
    kinds.add_argument("--cases-only", action="store_true", help="run no scenario")
    kinds.add_argument("--scenarios-only", action="store_true", help="run no single-turn case")
    styles = run.add_mutually_exclusive_group()
    styles.add_argument("--quick", dest="full", action="store_false", default=False,
                        help="scenarios in the calm visitor style only (the default)")
    styles.add_argument("--full", dest="full", action="store_true",
                        help="scenarios in every visitor style they allow")
    run.add_argument("--max-cost", type=float,
                     default=float(os.environ["EVAL_MAX_COST"]) if os.environ.get(
                         "EVAL_MAX_COST") else None,
                     help="stop issuing model calls once the run's cost reaches this many USD"
                          " (EVAL_MAX_COST); unstarted cases are SKIPPED and the exit is 1")
    res = sub.add_parser("resume", help="run what an interrupted run left, into that run")
    res.add_argument("run", nargs="?", help="the run id (default: the newest interrupted one)")
    res.add_argument("--concurrency", type=int,
                     default=int(os.environ.get("EVAL_CONCURRENCY") or DEFAULT_CONCURRENCY))
    res.add_argument("--artifact", type=Path, default=ARTIFACT)
    res.add_argument("--fail-on-skip", action=argparse.BooleanOptionalAction, default=None)
    res.add_argument("--max-cost", type=float, default=None)
    sub.add_parser("runs", help="list the stored runs")
    ws = sub.add_parser("workspace", help="run, read and author evals in the browser")
    ws.add_argument("--port", type=int, default=int(os.environ.get("WORKSPACE_PORT") or 8010))
    rep = sub.add_parser("report", help="a run as one self-contained HTML page")
    rep.add_argument("run", nargs="?", help="a stored run's or comparison's id, or a run"
                     " artifact's path (default: the last run's artifact)")
    rep.add_argument("--html", type=Path, required=True, help="the page to write")
    point = sub.add_parser("point", help="comparison points: a frozen agent and its plan")
    psub = point.add_subparsers(dest="point_command", required=True)
    save = psub.add_parser("save", help="freeze today's agent (or a stored run's) and plan")
    save.add_argument("name")
    save.add_argument("--from-run", help="freeze the agent and plan of this stored run")
    _run_options(save, model_help="the chat model the point freezes (EVAL_MODEL)")
    save.add_argument("--repeat", type=int, default=int(os.environ.get("EVAL_REPEAT") or 1))
    psub.add_parser("list", help="the saved points")
    show = psub.add_parser("show", help="one point: its agent, contexts and plan")
    show.add_argument("name")
    cmp_ = sub.add_parser("compare", help="a point's frozen agent against today's, paired")
    cmp_.add_argument("name", nargs="?", help="the comparison point")
    cmp_.add_argument("--runs", nargs=2, metavar=("A", "B"),
                      help="pair two stored runs instead (same plan only)")
    cmp_.add_argument("--adopt-plan", action="store_true",
                      help="when the plan changed: save a new point with the old agent and"
                           " the new plan, and compare under it")
    _run_options(cmp_, model_help="today's side runs this model instead (a model switch)")
    gate = sub.add_parser("gate", help="the gate for a model switch or a prompt change")
    _run_options(gate, model_help="the model to gate (EVAL_MODEL)")
    gate.add_argument("--against", help="a comparison point to list regressions against")
    gate.add_argument("--hard", default=os.environ.get("EVAL_HARD_FILES"),
                      help="comma list of files that allow no miss (EVAL_HARD_FILES; default"
                           " honest-absence,manual-grounding)")
    re_ = sub.add_parser("rescore", help="re-check a run's recorded answers, no model call")
    re_.add_argument("artifact", nargs="?", type=Path, default=ARTIFACT)
    re_.add_argument("--cases", type=Path, dest="rescore_cases",
                     help="a case file or folder to re-check against (default evals/cases/)")
    sub.add_parser("needs-local-model",
                   help="exit 0 when a run would use the embedded model (make eval asks)")
    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument("--groups", action="store_true", help="list the groups instead")
    acc = sub.add_parser("accuracy", help="the checks against labelled answers")
    acc.add_argument("labelled", nargs="?", type=Path,
                     help="a labelled file or folder (default tests/evals/labelled/)")
    acc.add_argument("--min", type=float, default=1.0,
                     help="the agreement below which the exit is 1 (default 1.0)")
    cal = sub.add_parser("calibrate", help="check the judge against people's verdicts")
    cal.add_argument("results", nargs="?", type=Path, help="a run artifact with judged cases")
    cal.add_argument("labels", nargs="?", type=Path, help='{"case-id": "pass" | "fail"}')
    cal.add_argument("--set", choices=["makerspace", "mrbench"],
                     help="a labelled set instead: makerspace (the team's labelled replies to"
                          " this suite's judged cases) or mrbench (--file)")
    cal.add_argument("--save", action="store_true",
                     help=f"record the result in {JUDGES_FILE.name}: what decides whether the"
                          " judge's verdicts count")
    cal.add_argument("--file", type=Path, help="the set's data file (MRBench_V2.json)")
    cal.add_argument("--judge-model", default=os.environ.get("EVAL_JUDGE_MODEL"))
    cal.add_argument("--limit", type=int, default=30, help="tutor replies to rate")
    cal.add_argument("--json", action="store_true", help="print JSON")
    from evals.cli.authoring import add_parsers

    add_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        args = _parser().parse_args(["run", *(argv or sys.argv[1:])])
    if args.command == "needs-local-model":
        from app.localmodel import uses_local_model

        settings = get_settings()
        model, judge = os.environ.get("EVAL_MODEL"), os.environ.get("EVAL_JUDGE_MODEL")
        local = uses_local_model(settings, model) or uses_local_model(settings, judge, "judge") \
            or uses_local_model(settings, None, "sim_user")  # the scenarios' visitor
        return 0 if local else 1
    if args.command == "calibrate":
        return _calibrate(args)
    if args.command == "accuracy":
        return _accuracy(args)
    if args.command == "rescore":
        return _rescore(args)
    if args.command in ("prompt", "draft", "from-conversations", "mcp"):
        from evals.cli import authoring as cli_authoring

        return int(getattr(cli_authoring, args.command.replace("-", "_"))(args))
    if args.command == "workspace":
        from evals.cli.runs import workspace

        return workspace(args)
    if args.command == "report":
        from evals.cli.runs import html_report

        return html_report(args)
    if args.command in ("runs", "resume"):
        from evals.cli import runs as cli_runs

        return int(getattr(cli_runs, args.command)(args))
    if args.command in ("point", "compare", "gate"):
        from evals.cli import versions as cli_versions

        return int(getattr(cli_versions, args.command)(args))
    if getattr(args, "suite", None):
        return _run_suite(args)
    try:
        source = getattr(args, "case_file", None)
        cases = load_cases(source) if source else load_cases()
    except CaseFileError as exc:
        print("case files have errors:", file=sys.stderr)
        for line in exc.errors:
            print(f"  {line}", file=sys.stderr)
        return 2
    if args.command == "list":
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
    try:
        if args.endpoint:  # an endpoint is sent cases; scenarios need the app
            selected = select_groups(select(cases, args.cases), args.group)
        else:
            from evals.load.selection import select_items

            selected = select_items(args)
    except CaseFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not selected:
        print("nothing selected to run", file=sys.stderr)
        return 2
    if args.concurrency < 1 or args.repeat < 1:
        print("--concurrency (EVAL_CONCURRENCY) and --repeat (EVAL_REPEAT) must be at least 1",
              file=sys.stderr)
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
                return run_closing(_run_endpoint(selected, args, settings))
        except LocalModelError as exc:
            print(f"local model: {exc}", file=sys.stderr)
            return 2
    from evals.cli.runs import run_once, with_models

    return with_models(args, selected, [args.model],
                       lambda settings: run_once(selected, args, settings))


def _judge_is_local(settings: Any, cases: list[Any], judge_model: str | None) -> bool:
    """Whether the run has judged cases and their judge is the embedded model."""
    from app.localmodel import uses_local_model

    return any(c.judged for c in cases) and uses_local_model(settings, judge_model, "judge")


async def _run_endpoint(cases: list[Any], args: argparse.Namespace, settings: Any) -> int:
    from app.chat.models import ModelCallError
    from app.chat.openai_wire import OpenAICompatModel
    from evals.execute.endpoint import run_endpoint
    from evals.judge.trust import JudgesFileError

    model = OpenAICompatModel(f"openai/{args.endpoint_model}", api_base=args.endpoint,
                              api_key=os.environ.get("ENDPOINT_API_KEY") or "none",
                              timeout_s=settings.model_timeout_s,
                              retries=settings.model_retries)
    try:
        judge = judge_setup(settings, cases, args)
    except (ModelCallError, JudgesFileError) as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return 2
    print(f"endpoint: {args.endpoint} ({args.endpoint_model}) · {len(cases)} cases")
    started = dt.datetime.now(dt.UTC)
    results = await run_endpoint(cases, model, judge, concurrency=args.concurrency)
    forced = bool(judge and judge.forced and not judge.trust.trusted)
    print_report(results, sys.stdout, trusted_by_flag=forced)
    meta = {"started": started.isoformat(), "ended": dt.datetime.now(dt.UTC).isoformat(),
            "models": {"endpoint": f"{args.endpoint_model} at {args.endpoint}"},
            "judge_model": judge.model.model_id if judge else None,
            "judge_trusted_by_flag": forced}
    print(f"artifact: {write_artifact(results, meta, args.artifact)}")
    return exit_code(results, fail_on_skip=fail_on_skip(args))


def _rescore(args: argparse.Namespace) -> int:
    from evals.report.rescore import ArtifactError, checked_anything, load_artifact, rescore

    try:
        artifact = load_artifact(args.artifact)
        cases, load_errors = load_cases_by_file(args.rescore_cases or CASES_DIR)
    except (ArtifactError, CaseFileError) as exc:
        print(exc, file=sys.stderr)
        return 2
    for file_errors in load_errors.values():
        for line in file_errors:
            print(f"case file error: {line}", file=sys.stderr)
    results = rescore(artifact, cases, load_errors)
    print_report(results, sys.stdout)
    if not checked_anything(results):
        print(f"nothing was re-checked: none of the {len(results)} recorded case(s) has an"
              " answer that a loaded case file checks", file=sys.stderr)
        return 2
    return exit_code(results)


def _accuracy(args: argparse.Namespace) -> int:
    from evals.calibration.accuracy import LABELLED_DIR, load_items, measure, report

    try:
        items = load_items(args.labelled or LABELLED_DIR)
    except CaseFileError as exc:
        print("labelled files have errors:", file=sys.stderr)
        for line in exc.errors:
            print(f"  {line}", file=sys.stderr)
        return 2
    agreement = report(measure(items), sys.stdout)
    if agreement < args.min:
        print(f"\nagreement {agreement:.1%} is below {args.min:.1%}", file=sys.stderr)
        return 1
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    import json as json_

    from evals.calibration.calibrate import (
        CalibrationError,
        calibrate,
        judge_of_artifact,
        load,
        render,
        to_json,
    )

    try:
        if args.set is None:
            if not (args.results and args.labels):
                print("calibrate needs RESULTS LABELS, --set makerspace, or --set mrbench"
                      " --file PATH", file=sys.stderr)
                return 2
            rated, labels = load(args.results, args.labels)
            result = calibrate(rated, labels)
            print(to_json(result) if args.json else render(result))
            if args.save:
                model, prompt = judge_of_artifact(json_.loads(args.results.read_text()))
                if model is None or prompt is None:
                    print(f"--save: {args.results} has no single judge model and prompt",
                          file=sys.stderr)
                    return 2
                _save(model, prompt, f"labels:{args.labels.name}", result)
            return 0
        if args.set == "makerspace":
            return _calibrate_makerspace(args)
        if args.file is None:
            print("--set mrbench needs --file PATH (the MRBench V2 JSON)", file=sys.stderr)
            return 2
        return _calibrate_mrbench(args)
    except CalibrationError as exc:
        print(exc, file=sys.stderr)
        return 2


def _save(model: str, prompt_hash: str, set_name: str, result: Any) -> None:
    from evals.judge.trust import JudgeRecord, save_record, today, trust

    save_record(JudgeRecord(model=model, prompt_hash=prompt_hash, set=set_name, n=result.rated,
                            agreement=result.agreement, kappa=result.kappa, date=today()))
    verdict = trust(model, prompt_hash)
    print(f"saved to {JUDGES_FILE}: {model} on {set_name}; its verdicts"
          f" {'decide cases' if verdict.trusted else 'stay advisory'} ({verdict.reason})")


def _calibrate_makerspace(args: argparse.Namespace) -> int:
    from evals.calibration.calibrate import calibrate, render, to_json
    from evals.calibration.sets import load_set, rate
    from evals.judge import MAKERSPACE

    items = load_set(load_cases())
    rated = _rate_with_judge(
        args, f"{len(items)} labelled replies to {len({i.case.id for i in items})} judged cases",
        lambda model, parallel: rate(items, model, parallel))
    if rated is None:
        return 2
    model_id, (verdicts, labels) = rated
    result = calibrate(verdicts, labels)
    print(to_json(result) if args.json else render(result))
    if args.save:
        _save(model_id, MAKERSPACE.hash(), "makerspace", result)
    return 0


def _rate_with_judge(args: argparse.Namespace, what: str,
                     rate: Callable[[Any, int], Coroutine[Any, Any, T]]) -> tuple[str, T] | None:
    """Have the judge (the embedded model started if it is the one) rate a set; None, said on
    stderr, when the judge cannot be had."""
    from app.chat.models import ModelCallError, model_for_job
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError

    settings = get_settings()
    try:
        with local_model_settings(settings, uses_local_model(settings, args.judge_model,
                                                             "judge")) as settings:
            model = model_for_job(settings, "judge", args.judge_model)
            print(f"judge: {model.model_id} · {what}")
            return model.model_id, run_closing(rate(model, settings.local_model_parallel))
    except (LocalModelError, ModelCallError) as exc:
        print(exc, file=sys.stderr)
        return None


def _run_suite(args: argparse.Namespace) -> int:
    """`run --suite mrbench --file PATH [--limit N] --endpoint URL --endpoint-model ID`."""
    from app.chat.openai_wire import OpenAICompatModel
    from evals.calibration.calibrate import CalibrationError
    from evals.calibration.mrbench import DIMENSIONS, load_dialogues, run_suite
    from evals.judge import TUTORING
    from evals.judge.trust import JudgesFileError, trust

    if not (args.endpoint and args.endpoint_model and args.suite_file):
        print("--suite mrbench needs --file PATH, --endpoint URL and --endpoint-model ID",
              file=sys.stderr)
        return 2
    if args.limit < 1:
        print("--limit must be at least 1", file=sys.stderr)
        return 2
    try:
        dialogues = load_dialogues(args.suite_file, args.limit)
    except CalibrationError as exc:
        print(exc, file=sys.stderr)
        return 2
    endpoint = OpenAICompatModel(f"openai/{args.endpoint_model}", api_base=args.endpoint,
                                 api_key=os.environ.get("ENDPOINT_API_KEY") or "none",
                                 timeout_s=get_settings().model_timeout_s,
                                 retries=get_settings().model_retries)
    started = dt.datetime.now(dt.UTC)
    holder: dict[str, Any] = {}

    async def rate(model: Any, parallel: int) -> list[Any]:
        try:
            holder["trust"] = trust(model.model_id, TUTORING.hash())
        except JudgesFileError as exc:
            holder["trust"] = None
            print(exc, file=sys.stderr)
        decides = bool(args.trust_judge or (holder["trust"] and holder["trust"].trusted))
        print(f"judge: {'decides' if decides else 'advisory (verdicts stay UNDECIDED)'}"
              + (f": {holder['trust'].reason}" if holder["trust"] else ""))
        return await run_suite(dialogues, endpoint, model, decides,
                               concurrency=max(1, min(args.concurrency, parallel * 2)))

    rated = _rate_with_judge(args, f"{len(dialogues)} MRBench dialogues from {args.endpoint}"
                             f" ({args.endpoint_model}) × {len(DIMENSIONS)} dimensions", rate)
    if rated is None:
        return 2
    judge_id, results = rated
    forced = bool(args.trust_judge and not (holder.get("trust") and holder["trust"].trusted))
    print_report(results, sys.stdout, trusted_by_flag=forced)
    meta = {"started": started.isoformat(), "ended": dt.datetime.now(dt.UTC).isoformat(),
            "models": {"endpoint": f"{args.endpoint_model} at {args.endpoint}"},
            "judge_model": judge_id, "judge_trusted_by_flag": forced,
            "settings": {"suite": "mrbench", "file": args.suite_file.name,
                         "limit": args.limit, "judge_prompt_hash": TUTORING.hash()}}
    print(f"artifact: {write_artifact(results, meta, args.artifact)}")
    return exit_code(results, fail_on_skip=False)


def _calibrate_mrbench(args: argparse.Namespace) -> int:
    import json as json_

    from evals.calibration.calibrate import render, to_json
    from evals.calibration.mrbench import DIMENSIONS, load_items, rate, report

    items = load_items(args.file, args.limit)
    rated = _rate_with_judge(args, f"{len(items)} tutor replies × {len(DIMENSIONS)} dimensions",
                             lambda model, parallel: rate(items, DIMENSIONS, model, parallel))
    if rated is None:
        return 2
    model_id, ratings = rated
    results = report(ratings)
    if args.json:
        print(json_.dumps({k: json_.loads(to_json(v)) for k, v in results.items()}, indent=2))
    else:
        for name, c in results.items():
            print(render(c, f"== {name}"))
            print()
    if args.save:
        from evals.judge import TUTORING

        for name, c in results.items():
            _save(model_id, TUTORING.hash(), f"mrbench:{name}", c)
    return 0


