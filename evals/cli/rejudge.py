"""`python -m evals rejudge RUN --judge-model MODEL [--pack PACK/NAME]`: a stored run's recorded
replies judged again by another judge, stored as a new assessment beside the run's own verdicts
(which never change), and the two printed side by side (evals/calibration/rejudge.py)."""

from __future__ import annotations

import argparse

from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.settings import Settings
from evals.api.options import JudgeChoice
from evals.api.setup import (
    app_settings,
    calibrate_new_judge,
    in_store,
    open_store,
    run_closing,
    start_models,
)
from evals.calibration.rejudge import rejudge, render
from evals.checks import CHECKS
from evals.cli.common import CliError, Commands, positive
from evals.execute.cache import POLICIES, CacheUse, Policy, call_cache
from evals.judge.setup import JudgeSetup
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.selection import select_items
from evals.record.assessment import save_assessment
from evals.record.fingerprint import Selection
from evals.record.run import RunRecord
from evals.record.store import StoreError, new_run_id
from evals.settings import DEFAULT_CONCURRENCY, eval_settings


def register(sub: Commands) -> None:
    env = eval_settings()
    p = sub.add_parser("rejudge", help="judge a stored run's recorded replies again with"
                       " another judge: a new assessment beside the original verdicts, shown"
                       " side by side")
    p.add_argument("run", help="a stored run's id, or a unique prefix of one")
    p.add_argument("--judge-model", default=env.judge_model,
                   help="the judge to ask (EVAL_JUDGE_MODEL; default: job judge, MODEL_JUDGE)")
    p.add_argument("--pack", "--judge", dest="pack", metavar="PACK/NAME",
                   help="rate the judged cases with this evaluator pack's prompt instead of"
                        " their own rubric (packs: evals/judge/packs/; --judge as `run`"
                        " spells it)")
    p.add_argument("--trust-judge", action="store_true", default=env.trust_judge,
                   help="let an uncalibrated judge's verdicts decide (EVAL_TRUST_JUDGE)")
    p.add_argument("--advisory-judge", action="store_true", default=env.advisory_judge,
                   help="call a judge that has not earned trust, its verdicts advisory"
                        " (EVAL_ADVISORY_JUDGE; by default it is not called)")
    p.add_argument("--auto-calibrate", action=argparse.BooleanOptionalAction,
                   default=env.auto_calibrate,
                   help="calibrate a judge with no calibration record under its prompt first,"
                        " as a run does (EVAL_AUTO_CALIBRATE)")
    p.add_argument("--cache", choices=POLICIES, default=env.cache,
                   help="the model-call cache (EVAL_CACHE): reuse replays a verdict the same"
                        " judge gave already, refresh asks again")
    p.add_argument("--concurrency", type=positive, default=env.concurrency,
                   help="verdicts asked at once (EVAL_CONCURRENCY)")
    p.set_defaults(handler=rejudge_command)


def rejudge_command(args: argparse.Namespace) -> int:
    choice = JudgeChoice(args.judge_model, args.pack, bool(args.trust_judge),
                         bool(args.advisory_judge), bool(args.auto_calibrate))
    record = in_store(lambda settings: _load(settings, args.run))
    items = judged_items(record)
    settings = app_settings()
    local = uses_local_model(settings, choice.model, "judge")
    concurrency = args.concurrency or (settings.local_model_parallel if local
                                       else DEFAULT_CONCURRENCY)
    try:
        with local_model_settings(settings, local) as settings:
            calibrate_new_judge(settings, items, choice, concurrency)
            return run_closing(_rejudge(settings, record, items, choice, args.cache,
                                        concurrency))
    except LocalModelError as exc:
        raise CliError(f"local model: {exc}") from exc
    except StoreError as exc:
        raise CliError(str(exc)) from exc


async def _load(settings: Settings, ref: str) -> RunRecord:
    async with open_store(settings) as store:
        return await store.load_run(ref)


def judged_items(record: RunRecord) -> list[EvalItem]:
    """Today's items that the run judged (loaded as the run selected them, so a scenario's
    visitor styles are the run's)."""
    judged = {c.id for c in record.cases for a in c.attempts for check in a.checks
              if check.judged}
    if not judged:
        raise CliError(f"run {record.run_id} holds no judged verdict to judge again")
    if record.plan is None:
        raise CliError(f"run {record.run_id} records no plan: what its judge was asked cannot"
                       " be told")
    sel = record.plan.selection or Selection()
    try:
        loaded = select_items(Selection(file=sel.file, only=sel.only, full=sel.full))
    except CaseFileError as exc:
        raise CliError("case files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    items = [i for i in loaded if i.id in judged]
    if not items:
        raise CliError(f"none of the {len(judged)} judged item(s) of run {record.run_id} is in"
                       " the case files any more: nothing to judge again")
    return items


def asked_anything(judge: JudgeSetup, items: list[EvalItem]) -> bool:
    """Whether the judge is called for any of these items' verdicts (a pack's prompt rates a
    case's rubric under the pack's trust; a scenario's criteria keep the base prompt's)."""
    kinds = {s.kind for i in items for s in i.checks if CHECKS[s.kind].needs_judge}
    return ("rubric" in kinds and judge.asked(judge.pack is not None)) or \
        ("criterion" in kinds and judge.asked(False))


async def _rejudge(settings: Settings, record: RunRecord, items: list[EvalItem],
                   choice: JudgeChoice, policy: Policy, concurrency: int) -> int:
    _, judge = start_models(settings, items, choice)
    assert judge is not None  # the items are judged ones
    if not asked_anything(judge, items):
        raise CliError(f"{judge.model.model_id} has not earned trust, so it is not called and"
                       " would judge nothing again; --advisory-judge asks it anyway (its"
                       " verdicts advisory), --trust-judge lets them decide; nothing was"
                       " stored")
    same = {(c.judge.model, c.judge.prompt_hash) for case in record.cases
            for a in case.attempts for c in a.checks if c.judged and c.judge is not None}
    if same == {(judge.model.model_id, judge.prompt_hash)} and policy == "reuse":
        print(f"note: {judge.model.model_id} under prompt {judge.prompt_hash} is the run's own"
              " judge: verdicts it gave are replayed from the call cache (--cache refresh"
              " asks it again)")
    async with open_store(settings) as store:
        calls = call_cache(store.db, policy)
        try:
            result = await rejudge(record, items, judge, assessment_id=new_run_id(),
                                   cache=CacheUse(calls, policy), concurrency=concurrency)
        finally:
            if calls is not None:
                await calls.close()
        if not result.pairs:
            raise CliError("no verdict of run " + str(record.run_id) + " can be judged again,"
                           " so nothing was stored:\n" + "\n".join(
                               f"  {left.id} #{left.repetition}: {left.reason}"
                               for left in result.assessment.left_out))
        missing = await save_assessment(store, result.assessment)
    print(render(result, record))
    print(f"stored as assessment {result.assessment.id} of run {record.run_id}, beside its"
          " original verdicts (unchanged)"
          + (f"; {len(missing)} item(s) the store does not hold left out: {', '.join(missing)}"
             if missing else ""))
    return 0
