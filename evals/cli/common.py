"""What the commands share: the command-line error, the run flags every running command
takes (each flag's default from EvalSettings) and the typed options they become."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import TypeAlias

from evals.api.errors import ApiError
from evals.api.options import JudgeChoice, RunOptions
from evals.record.artifact import ARTIFACT
from evals.record.fingerprint import Selection
from evals.record.repetitions import RepeatRule, parse_repeat
from evals.record.run import RunRecord
from evals.settings import DEFAULT_CONCURRENCY, POLICIES, eval_settings

# What a command group's `register` is given: the subcommands of `python -m evals`.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CliError(ApiError):
    """What stops a command because of how it was asked (its flags), said once on stderr by
    `main` (exit 2), as every ApiError is."""


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def repetitions(text: str) -> int | RepeatRule:
    """An argparse type: `--repeat K` or `--repeat auto[:MAX]`."""
    try:
        return parse_repeat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_item_flags(p: argparse.ArgumentParser) -> None:
    """Which kinds of item a command runs: cases, scenarios or both, and in which styles."""
    kinds = p.add_mutually_exclusive_group()
    kinds.add_argument("--cases-only", action="store_true", help="run no scenario")
    kinds.add_argument("--scenarios-only", action="store_true", help="run no single-turn case")
    styles = p.add_mutually_exclusive_group()
    styles.add_argument("--quick", dest="full", action="store_false", default=False,
                        help="scenarios in the calm visitor style only (the default)")
    styles.add_argument("--full", dest="full", action="store_true",
                        help="scenarios in every visitor style they allow")


def add_run_flags(p: argparse.ArgumentParser, *, model_help: str) -> None:
    """The flags every command that runs items shares, each with its EVAL_ variable."""
    env = eval_settings()
    p.add_argument("--cases", default=env.cases,
                   help="comma list of case files (without .yaml) or case ids (EVAL_CASES)")
    p.add_argument("--group", default=env.groups,
                   help="comma list of case groups (EVAL_GROUPS)")
    p.add_argument("--model", default=env.model, help=model_help)
    p.add_argument("--judge-model", default=env.judge_model,
                   help="the judge for rubric/must_not cases (EVAL_JUDGE_MODEL; default: job"
                        " judge, MODEL_JUDGE)")
    p.add_argument("--judge", dest="judge_pack", metavar="PACK/NAME",
                   help="rate every judged case with this evaluator pack's prompt instead of"
                        " its own rubric (packs: evals/judge/packs/)")
    p.add_argument("--concurrency", type=positive, default=env.concurrency,
                   help=f"cases in flight at once (EVAL_CONCURRENCY, default "
                        f"{DEFAULT_CONCURRENCY})")
    p.add_argument("--trust-judge", action="store_true", default=env.trust_judge,
                   help="let an uncalibrated judge decide cases (EVAL_TRUST_JUDGE); the"
                        " report and the artifact say so")
    p.add_argument("--advisory-judge", action="store_true", default=env.advisory_judge,
                   help="call a judge that has not earned trust and record its verdicts as"
                        " advisory (EVAL_ADVISORY_JUDGE; by default it is not called)")
    p.add_argument("--auto-calibrate", action=argparse.BooleanOptionalAction,
                   default=env.auto_calibrate,
                   help="calibrate a judge with no calibration record under its prompt on the"
                        " makerspace set before the run, and save the record (never a pack's"
                        " prompt: the set's labels were given under each case's own rubric)"
                        " (EVAL_AUTO_CALIBRATE; on by default)")
    p.add_argument("--cache", choices=POLICIES, default=env.cache,
                   help="the model-call cache (EVAL_CACHE): reuse replays a call already made"
                        " (default), refresh makes every call again and keeps it, off"
                        " neither reads nor writes it")
    p.add_argument("--fail-on-skip", action=argparse.BooleanOptionalAction,
                   default=env.fail_on_skip,
                   help="a skipped case makes the exit non-zero (EVAL_FAIL_ON_SKIP; on by"
                        " default when EVAL_MODEL or --model is set)")
    p.add_argument("--artifact", type=Path, default=ARTIFACT)


def add_spend_flags(p: argparse.ArgumentParser, *, default: bool = True) -> None:
    """`--max-cost USD` and `--allow-unpriced`: the command's one budget, every model call it
    makes drawn on it (EVAL_MAX_COST, EVAL_ALLOW_UNPRICED unless `default` is False)."""
    env = eval_settings()
    p.add_argument("--max-cost", type=float, default=env.max_cost if default else None,
                   metavar="USD",
                   help="the most this command's model calls may cost, every job's (chat,"
                        " judge, visitor, calibration, drafting): no call is made that could"
                        " pass it; what it left undone is said (EVAL_MAX_COST)")
    p.add_argument("--allow-unpriced", action="store_true",
                   default=env.allow_unpriced if default else False,
                   help="under --max-cost, call a model with no known price anyway, its calls"
                        " not counted (EVAL_ALLOW_UNPRICED; by default it is refused before"
                        " any call)")


def add_ray_flag(p: argparse.ArgumentParser) -> None:
    """`--ray [ADDRESS]`: the run over a Ray cluster (EVAL_RAY_ADDRESS)."""
    p.add_argument("--ray", nargs="?", const="auto", default=eval_settings().ray_address,
                   metavar="ADDRESS",
                   help="spread the run over a Ray cluster: auto (the default) joins the"
                        " running one, an address joins that one, local:N starts a local"
                        " instance with N workers (EVAL_RAY_ADDRESS)")


def run_options(args: argparse.Namespace, selection: Selection | None = None) -> RunOptions:
    """The typed options of a parsed command line."""
    asked = getattr(args, "repeat", 1)
    rule = asked if isinstance(asked, RepeatRule) else None
    return RunOptions(
        selection=selection or Selection.of(
            args.cases, args.group, file=str(args.case_file) if getattr(
                args, "case_file", None) else None,
            only="cases" if getattr(args, "cases_only", False) else
            "scenarios" if getattr(args, "scenarios_only", False) else None,
            full=bool(getattr(args, "full", False))),
        model=args.model,
        judge=JudgeChoice(args.judge_model, getattr(args, "judge_pack", None),
                          bool(args.trust_judge), bool(getattr(args, "advisory_judge", False)),
                          bool(getattr(args, "auto_calibrate", True))),
        concurrency=args.concurrency, repeat=rule.max if rule else asked, rule=rule,
        fail_on_skip=args.fail_on_skip, max_cost=getattr(args, "max_cost", None),
        allow_unpriced=bool(getattr(args, "allow_unpriced", False)),
        vision=eval_settings().vision, artifact=args.artifact,
        junit=getattr(args, "junit", None), cache=getattr(args, "cache", "reuse"),
        ray=getattr(args, "ray", None))


def say_capped(*records: RunRecord) -> None:
    """On stderr, when the cost cap cut the command short: how many items it left unrun and
    what the command spent, each job's part, of its cap (the records share one spend)."""
    left = sum(len(r.capped) for r in records)
    spend = records[-1].spend if records else None
    if spend is None or spend.max_cost_usd is None or not (left or spend.refused):
        return
    parts = ", ".join(f"{job} ${usd:.4f}" for job, usd in spend.parts().items() if usd)
    print(f"cost cap reached: {left} item(s) not run, {spend.refused} model call(s) not made;"
          f" spent ${spend.total:.4f}{f' ({parts})' if parts else ''} of"
          f" ${spend.max_cost_usd:.4f}", file=sys.stderr)


def flagged(args: argparse.Namespace, name: str) -> bool:
    """Whether `--name` was given on the command line with a value of its own: a value that is
    only its EVAL_ variable's (the flag's default) was not asked of this command."""
    env = eval_settings()
    defaults = {"model": env.model, "ray": env.ray_address, "max_cost": env.max_cost,
                "cases": env.cases, "group": env.groups,
                "repeat": parse_repeat(str(env.repeat))}
    return getattr(args, name, None) != defaults.get(name)


def date_arg(value: str) -> dt.datetime:
    """A `--since` date (YYYY-MM-DD, read as UTC)."""
    try:
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None
