"""The commands that measure the instruments: accuracy (the checks against labelled answers),
calibrate (the judge against people's verdicts, or its scores against trained raters' on the
essay sets). `run --suite` is in suites.py."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.settings import Settings
from evals.api.budget import capped_line, say_spent
from evals.api.calibrating import (
    Calibrated,
    Measured,
    calibrate_judge,
    judge_budget,
    save_trust,
)
from evals.api.setup import in_store, open_store, rate_with_judge
from evals.calibration.accuracy import LABELLED_DIR, load_sets, measure, report
from evals.calibration.calibrate import (
    Calibration,
    CalibrationError,
    calibrate,
    judge_of,
    load,
    render,
    to_json,
)
from evals.calibration.essays import SETS as ESSAY_SETS
from evals.calibration.essays import load_essays, rate_essays
from evals.calibration.labels import LABELS_SET, LabelCalibration, from_labels, render_extra
from evals.calibration.scores import calibrate_scores, render_scores, scores_json
from evals.cli.common import CliError, Commands, add_spend_flags
from evals.judge import ESSAY
from evals.judge.questions import QUESTIONS
from evals.judge.trust import (
    JUDGES_FILE,
    PACK_SET,
    Trust,
    pack_labels_needed,
)
from evals.load.cases import CaseFileError
from evals.load.packs import PackError, load_pack_prompt
from evals.settings import eval_settings

FILES = {"mrbench": "the MRBench V2 JSON", "asap2": "the ASAP 2.0 CSV",
         "ellipse": "the ELLIPSE CSV"}


def register(sub: Commands) -> None:
    acc = sub.add_parser("accuracy", help="the checks against labelled answers")
    acc.add_argument("labelled", nargs="?", type=Path,
                     help="a labelled file or folder (default tests/evals/labelled/)")
    acc.add_argument("--min", type=float, default=1.0,
                     help="the tuned sets' agreement on decided verdicts below which the exit"
                          " is 1 (default 1.0; the held-out sets' when only those are given)")
    acc.set_defaults(handler=accuracy)
    cal = sub.add_parser("calibrate", help="check the judge against people's verdicts")
    cal.add_argument("results", nargs="?", type=Path, help="a run artifact with judged cases")
    cal.add_argument("labels", nargs="?", type=Path, help='{"case-id": "pass" | "fail"}')
    cal.add_argument("--set", choices=["makerspace", "mrbench", *ESSAY_SETS],
                     help="a labelled set instead: makerspace (the team's labelled replies to"
                          " this suite's judged cases), mrbench (--file), or the essays"
                          " trained raters scored, asap2 or ellipse (--file)")
    cal.add_argument("--questions", nargs="?", const="all", metavar="KIND",
                     help="the narrow questions that settle undecided structural verdicts"
                          f" ({', '.join(QUESTIONS)}, or all): the judge answers each about"
                          " the labelled answers of the check it settles; --save records a"
                          " trust per question kind")
    cal.add_argument("--visitor", nargs="?", const="all", metavar="KIND",
                     help="the questions about a simulated visitor (broke_role, leaked,"
                          " gave_up, agreed_to_refused, or all): the judge answers each about"
                          " the labelled visitor transcripts; --save records a trust per kind")
    cal.add_argument("--labels", dest="stored_labels", action="store_true",
                     help="the labels people gave on the workspace's Labels tab (the run"
                          " store), against the judge's verdicts in the stored runs")
    cal.add_argument("--prompt-hash", help="--labels: the judge prompt's hash (needed when"
                                           " the labelled verdicts were given under several)")
    cal.add_argument("--pack", help="--labels: only verdicts an evaluator pack's prompt gave"
                                    " (PACK/NAME), and only labels given with its rubric in"
                                    " view; --save records the pack's own calibration")
    cal.add_argument("--save", action="store_true",
                     help=f"record the result in {JUDGES_FILE.name}: what decides whether the"
                          " judge's verdicts count")
    cal.add_argument("--file", type=Path, help="the set's data file (MRBench_V2.json; the"
                                               " ASAP 2.0 or ELLIPSE CSV)")
    cal.add_argument("--judge-model", default=eval_settings().judge_model)
    cal.add_argument("--judge", dest="judge_pack", metavar="PACK/NAME",
                     help="refused: an evaluator pack is not calibrated on a labelled set"
                          " whose labels were given under each case's own rubric; see"
                          " --labels --pack")
    cal.add_argument("--limit", type=int, default=None,
                     help="tutor replies (mrbench) or essays (asap2, ellipse) to rate")
    cal.add_argument("--json", action="store_true", help="print JSON")
    add_spend_flags(cal)
    cal.set_defaults(handler=calibrate_command)


def accuracy(args: argparse.Namespace) -> int:
    try:
        items = load_sets(args.labelled or LABELLED_DIR)
    except CaseFileError as exc:
        raise CliError("labelled files have errors:\n" + "\n".join(
            f"  {line}" for line in exc.errors)) from exc
    agreement = report(measure(items), sys.stdout)
    if agreement < args.min:
        print(f"\nagreement on decided verdicts {agreement:.1%} is below {args.min:.1%}",
              file=sys.stderr)
        return 1
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    if args.judge_pack and args.stored_labels:
        raise CliError("--labels: name the pack with --pack PACK/NAME, not --judge")
    if args.judge_pack:
        _refuse_pack(args.judge_pack, args.set)
    try:
        if args.questions or args.visitor:
            return _calibrate_questions(args)
        if args.stored_labels:
            return _calibrate_labels(args)
        if args.set is None:
            return _calibrate_files(args)
        if args.set == "makerspace":
            return _calibrate_makerspace(args)
        if args.file is None:
            raise CliError(f"--set {args.set} needs --file PATH ({FILES[args.set]})")
        args.limit = 30 if args.limit is None else args.limit
        if args.limit < 1:
            raise CliError("--limit must be at least 1")
        if args.set in ESSAY_SETS:
            return _calibrate_essays(args)
        return _calibrate_mrbench(args)
    except CalibrationError as exc:
        raise CliError(str(exc)) from exc


def _calibrate_files(args: argparse.Namespace) -> int:
    if not (args.results and args.labels):
        raise CliError("calibrate needs RESULTS LABELS, --set makerspace, or --set mrbench"
                       " --file PATH")
    record, rated, labels = load(args.results, args.labels)
    result = calibrate(rated, labels)
    print(to_json(result) if args.json else render(result))
    if args.save:
        model, prompt = judge_of(record)
        if model is None or prompt is None:
            raise CliError(f"--save: {args.results} has no single judge model and prompt")
        _save(model, prompt, f"labels:{args.labels.name}", result)
    return 0


def _calibrate_labels(args: argparse.Namespace) -> int:
    if args.results or args.labels or args.set:
        raise CliError("--labels reads the stored labels: give no RESULTS LABELS nor --set")
    if not args.judge_model:
        raise CliError("--labels needs --judge-model ID (or EVAL_JUDGE_MODEL): whose verdicts")

    async def body(settings: Settings) -> LabelCalibration:
        async with open_store(settings) as store:
            return await from_labels(store, args.judge_model, args.prompt_hash, args.pack)

    found = in_store(body)
    if args.json:
        print(json.dumps({"judge": found.model, "prompt_hash": found.prompt_hash,
                          "people_disagree": found.people_disagree,
                          "only_skipped": found.only_skipped, "stale": found.stale,
                          "pack": found.pack,
                          "not_under_rubric": found.not_under_rubric,
                          "calibration": json.loads(to_json(found.result))}, indent=2))
    else:
        print(render(found.result) + "\n" + render_extra(found))
    if args.save:
        _save(found.model, found.prompt_hash, PACK_SET if args.pack else LABELS_SET,
              found.result, pack=args.pack)
    return 0


def _save(model: str, prompt_hash: str, set_name: str, result: Calibration,
          pack: str | None = None) -> None:
    _say_saved(model, set_name, save_trust(model, prompt_hash, set_name, result, pack), pack)


def _say_saved(model: str, set_name: str, verdict: Trust, pack: str | None = None) -> None:
    print(f"saved to {JUDGES_FILE}: {model}{f' with pack {pack}' if pack else ''} on"
          f" {set_name}; its verdicts"
          f" {'decide cases' if verdict.trusted else 'stay advisory'} ({verdict.reason})")


def _refuse_pack(ref: str, set_name: str | None) -> None:
    """`--judge PACK/NAME`: a labelled set's labels were given under each case's own rubric
    (or a tutoring or essay rubric), never the pack's, so they cannot measure the pack's prompt
    and no record is made of them; says what earns a pack trust instead."""
    try:
        pack = load_pack_prompt(ref)
    except PackError as exc:
        raise CliError(str(exc)) from exc
    where = f"the {set_name} set's" if set_name else "those"
    raise CliError(f"--judge {pack.ref}: {where} labels were given under each case's own"
                   f" rubric, not pack {pack.ref}'s, so they say nothing of the pack's prompt:"
                   " nothing is rated and no record is saved, and the pack has no labels given"
                   f" under its own rubric, so it stays untrusted; {pack_labels_needed(pack.ref)}")


def _calibrate_questions(args: argparse.Namespace) -> int:
    flag = "--questions" if args.questions else "--visitor"
    if args.results or args.labels or args.set or args.stored_labels or (
            args.questions and args.visitor):
        raise CliError(f"{flag} reads its own labelled set: give no RESULTS LABELS, --set,"
                       " --labels, nor both --questions and --visitor")
    def said(judge: str, m: Measured) -> None:  # each kind as it is measured (and saved)
        print(to_json(m.result) if args.json else render(m.result, f"{m.name} ({m.prompt_hash})"))
        if m.saved is not None:
            _say_saved(judge, m.set, m.saved)

    done = calibrate_judge("questions" if args.questions else "visitor",
                           judge_model=args.judge_model, limit=args.limit,
                           question=args.questions or args.visitor, save=args.save,
                           on_measured=said, max_cost=args.max_cost,
                           allow_unpriced=args.allow_unpriced)
    say_spent(done.spend)
    return 0


def _calibrate_makerspace(args: argparse.Namespace) -> int:
    done = calibrate_judge("makerspace", judge_model=args.judge_model, save=args.save,
                           max_cost=args.max_cost, allow_unpriced=args.allow_unpriced)
    print(to_json(done.measured[0].result) if args.json else render(done.measured[0].result))
    _said_saved(done)
    say_spent(done.spend)
    return 0


def _calibrate_mrbench(args: argparse.Namespace) -> int:
    done = calibrate_judge("mrbench", judge_model=args.judge_model, file=args.file,
                           limit=args.limit, save=args.save, max_cost=args.max_cost,
                           allow_unpriced=args.allow_unpriced)
    if args.json:
        print(json.dumps({m.name: json.loads(to_json(m.result)) for m in done.measured},
                         indent=2))
    else:
        for m in done.measured:
            print(render(m.result, f"== {m.name}"))
            print()
    _said_saved(done)
    say_spent(done.spend)
    return 0


def _said_saved(done: Calibrated) -> None:
    for m in done.measured:
        if m.saved is not None:
            _say_saved(done.judge, m.set, m.saved)


def _calibrate_essays(args: argparse.Namespace) -> int:
    """The judge's scores of essays beside trained raters', per trait: the table, agreement
    and quadratic weighted kappa. Nothing to --save: no run is judged with a score."""
    if args.save:
        raise CliError(f"--set {args.set} measures the judge's scores, and no run's verdict is"
                       " given with a score: there is no trust record to --save")
    essay_set = ESSAY_SETS[args.set]
    essays, traits = load_essays(args.file, essay_set, args.limit)
    spend = judge_budget(args.judge_model, args.max_cost, args.allow_unpriced)
    model_id, scored = rate_with_judge(
        args.judge_model, f"{len(essays)} essays × {len(traits)} rubric(s)"
        f" ({', '.join(t.column for t in traits)}) from {args.file.name}",
        lambda model, parallel: rate_essays(essays, traits, essay_set, model, parallel), spend)
    if spend.calls_refused:
        raise CliError(f"{capped_line(spend)}: the essays were scored only in part, so no"
                       " figure is shown")
    results = {name: calibrate_scores(s, essay_set.scale) for name, s in scored.items()}
    if args.json:
        print(json.dumps({"judge": model_id, "prompt_hash": ESSAY.hash(),
                          "traits": {k: json.loads(scores_json(v))
                                     for k, v in results.items()}}, indent=2))
    else:
        for name, c in results.items():
            print(render_scores(c, f"== {name}"))
            print()
    say_spent(spend)
    return 0
