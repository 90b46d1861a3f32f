"""The command that says what a change touches before it is run: impact."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from app.chat.models import ModelCallError, model_for_job
from app.settings import Settings
from evals.authoring.told import fixture_env
from evals.cli.common import (
    CliError,
    Commands,
    app_settings,
    in_store,
    open_store,
    repetitions,
)
from evals.cli.run import plan_for, visitor_for
from evals.execute.agent import agent_settings, all_contexts
from evals.execute.impact import Baseline, impact, last_baseline, run_baseline
from evals.judge import MAKERSPACE
from evals.judge.setup import JudgeSetup
from evals.judge.trust import JudgesFileError, trust
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.packs import PackError, load_pack_prompt
from evals.load.selection import select_items
from evals.record.fingerprint import PlanInfo, Selection
from evals.record.repetitions import RepeatRule
from evals.record.store import RunStore, StoreError
from evals.report.impact import NO_BASELINE, render
from evals.settings import eval_settings

# A server address the embedded model's ids resolve under: the impact needs a model's id,
# never its server, so none is started and nothing is called.
UNSTARTED_URL = "http://127.0.0.1:9/v1"


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
    against a baseline; no model is started or called."""
    selection = Selection.of(
        args.cases, args.group, file=str(args.case_file) if args.case_file else None,
        only="cases" if args.cases_only else "scenarios" if args.scenarios_only else None,
        full=args.full)
    try:
        items = select_items(selection)
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    if not items:
        raise CliError("nothing selected")
    settings = app_settings()
    model, plan = _model_and_plan(settings, items, args, selection)
    return in_store(lambda s: _impact(s, items, plan, model, args.against))


def _model_and_plan(settings: Settings, items: Sequence[EvalItem], args: argparse.Namespace,
                    selection: Selection) -> tuple[str, PlanInfo]:
    """Today's chat model id and the plan the run would have, without starting a model."""
    unstarted = settings.model_copy(update={
        "local_model_url": settings.local_model_url or UNSTARTED_URL,
        "local_prefix_cache": None})
    try:
        model = model_for_job(unstarted, "chat", args.model).model_id
        judge = None
        if any(i.judged for i in items):
            judge_model = model_for_job(unstarted, "judge", args.judge_model)
            pack = load_pack_prompt(args.judge_pack) if args.judge_pack else None
            judge = JudgeSetup(judge_model, trust(judge_model.model_id, MAKERSPACE.hash()),
                               pack=pack)
        visitor = visitor_for(unstarted, items)
    except (ModelCallError, PackError, JudgesFileError) as exc:
        raise CliError(f"cannot tell the impact: {exc}") from exc
    rule = args.repeat if isinstance(args.repeat, RepeatRule) else None
    return model, plan_for(items, judge, rule.max if rule else args.repeat, selection, rule,
                           visitor)


async def _impact(settings: Settings, items: list[EvalItem], plan: PlanInfo, model: str,
                  against: str | None) -> int:
    async with open_store(settings) as store:
        baseline = await _baseline(store, against) if against else \
            await last_baseline(store, plan)
    if baseline is None:
        print(NO_BASELINE)
        return 0
    fragments: dict[str, dict[str, str]] = {}
    async with fixture_env(settings) as env:
        contexts = await all_contexts(env, items, fragments)
    for line in render(impact(contexts, items, plan, model, agent_settings(settings),
                              baseline, fragments)):
        print(line)
    return 0


async def _baseline(store: RunStore, against: str) -> Baseline:
    """A comparison point by name, else a stored run by id or unique prefix."""
    try:
        point = await store.load_point(against)
    except StoreError as no_point:
        try:
            return await run_baseline(store, against)
        except StoreError as no_run:
            raise CliError(f"--against {against!r} is neither a comparison point nor one"
                           f" stored run: {no_point}; {no_run}") from None
    return Baseline(f"point {point.name} (saved {point.created[:16]}"
                    + (f", from run {point.from_run})" if point.from_run else ")"),
                    point.agent, point.plan)
