"""`python -m evals rejudge RUN --judge-model MODEL [--pack PACK/NAME]`: a stored run's recorded
replies judged again by another judge, stored as a new assessment beside the run's own verdicts
(which never change), and the two printed side by side (evals/calibration/rejudge.py)."""

from __future__ import annotations

import argparse

from evals.api.assess import rejudge
from evals.api.budget import say_spent
from evals.api.options import JudgeChoice
from evals.calibration.rejudge import render
from evals.cli.common import Commands, add_spend_flags, positive
from evals.settings import POLICIES, eval_settings


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
    add_spend_flags(p)
    p.set_defaults(handler=rejudge_command)


def rejudge_command(args: argparse.Namespace) -> int:
    choice = JudgeChoice(args.judge_model, args.pack, bool(args.trust_judge),
                         bool(args.advisory_judge), bool(args.auto_calibrate))
    done = rejudge(args.run, choice, cache=args.cache, concurrency=args.concurrency,
                   max_cost=args.max_cost, allow_unpriced=args.allow_unpriced)
    result, record, missing = done.result, done.record, done.missing
    print(render(result, record))
    print(f"stored as assessment {result.assessment.id} of run {record.run_id}, beside its"
          " original verdicts (unchanged)"
          + (f"; {len(missing)} item(s) the store does not hold left out: {', '.join(missing)}"
             if missing else ""))
    say_spent(done.spend)
    return done.exit_code
