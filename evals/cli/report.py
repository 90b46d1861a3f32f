"""The commands that read a finished run: report (one HTML page), rescore (today's checks
on its recorded answers, no model call, stored beside a stored run's results as an assessment:
evals.api.rescore) and repeat-rule (the auto repetition rule replayed on its recorded
repetitions)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.settings import Settings
from evals.api.assess import rescore
from evals.api.setup import in_store, open_store
from evals.cli.common import CliError, Commands
from evals.record.artifact import ARTIFACT, ArtifactError, read_run, write_atomically
from evals.record.assessment import assessments_of
from evals.record.repetitions import CONFIDENCE, THRESHOLD
from evals.record.run import RunRecord
from evals.record.store import StoreError
from evals.report.console import exit_code, print_report
from evals.report.html import render_comparison, render_run
from evals.report.repeat_rule import ReplayError, replay
from evals.report.repeat_rule import render as render_replay


def register(sub: Commands) -> None:
    rep = sub.add_parser("report", help="a run as one self-contained HTML page")
    rep.add_argument("run", nargs="?", help="a stored run's or comparison's id, or a run"
                     " artifact's path (default: the last run's artifact)")
    rep.add_argument("--html", type=Path, required=True, help="the page to write")
    rep.set_defaults(handler=html_report)
    re_ = sub.add_parser("rescore", help="re-check a run's recorded answers, no model call;"
                         " a stored run's rescore is stored beside its results")
    re_.add_argument("run", nargs="?", help="a stored run's id (or prefix), or a run"
                     " artifact's path (default: the last run's artifact)")
    re_.add_argument("--cases", type=Path, dest="rescore_cases",
                     help="a case file or folder to re-check against (default evals/cases/)")
    re_.set_defaults(handler=rescore_command)
    rr = sub.add_parser("repeat-rule", help="replay --repeat auto on a run's recorded"
                        " repetitions: its verdicts and repetitions against the fixed K")
    rr.add_argument("run", nargs="?", help="a stored run's id (or prefix), or a run artifact's"
                    " path (default: the last run's artifact)")
    rr.add_argument("--max", type=int, help="the rule's MAX (default: the run's K)")
    rr.add_argument("--threshold", type=float, default=THRESHOLD,
                    help=f"the pass rate a case must reach (default {THRESHOLD})")
    rr.add_argument("--confidence", type=float, default=CONFIDENCE,
                    help=f"of the exact interval (default {CONFIDENCE})")
    rr.set_defaults(handler=repeat_rule)


def html_report(args: argparse.Namespace) -> int:
    """`python -m evals report [RUN | COMPARISON] --html FILE`."""
    ref = args.run
    try:
        if ref is None or Path(ref).is_file():
            record = read_run(Path(ref) if ref else ARTIFACT)
            text, what = render_run(record), f"{len(record.cases)} cases, run {record.run_id}"
        else:
            text, what = in_store(lambda settings: _stored_report(settings, ref))
    except ArtifactError as exc:
        raise CliError(str(exc)) from exc
    write_atomically(args.html, text)
    print(f"report: {args.html} ({what})")
    return 0


async def _stored_report(settings: Settings, ref: str) -> tuple[str, str]:
    """A stored run's page (with the assessments stored beside it), or a stored comparison's
    (both runs with their pairs)."""
    async with open_store(settings) as store:
        try:
            record = await store.load_run(ref)
        except StoreError as not_a_run:
            try:
                row = await store.load_comparison(ref)
            except StoreError:
                if "ambiguous" in str(not_a_run):
                    raise not_a_run from None
                raise StoreError(f"no stored run or comparison {ref!r} (python -m evals runs"
                                 " lists the runs)") from None
            base = await store.load_run(row.baseline_run)
            cur = await store.load_run(row.current_run)
            return (render_comparison(row.id, row.result, base, cur),
                    f"comparison {row.id}, {len(row.result.cases)} cases paired")
        assessments = await assessments_of(store, str(record.run_id))
    beside = f", {len(assessments)} assessment(s) beside it" if assessments else ""
    return (render_run(record, assessments),
            f"{len(record.cases)} cases, run {record.run_id}{beside}")


def rescore_command(args: argparse.Namespace) -> int:
    """`python -m evals rescore [RUN | ARTIFACT]`: today's checks on the recorded answers
    (evals.api.rescore). A run the store holds gets the rescore stored beside its results as
    a new assessment; its own results are never changed."""
    done = rescore(args.run, args.rescore_cases)
    for file_errors in done.load_errors.values():
        for line in file_errors:
            print(f"case file error: {line}", file=sys.stderr)
    print_report(done.results, sys.stdout)
    if not done.checked:
        raise CliError(str(done.not_stored))
    if done.assessment_id is None:
        print(f"{'warning' if done.store_down else 'note'}: the rescore is not stored:"
              f" {done.not_stored}", file=sys.stderr)
    else:
        print(f"rescore: stored as assessment {done.assessment_id} of run {done.record.run_id},"
              " beside its original results (unchanged)")
    if done.missing:
        print(f"note: {len(done.missing)} rescored case(s) the store does not hold are not in"
              f" the assessment: {', '.join(done.missing[:10])}"
              + (", …" if len(done.missing) > 10 else ""), file=sys.stderr)
    return exit_code(done.results)


def repeat_rule(args: argparse.Namespace) -> int:
    """`python -m evals repeat-rule [RUN | ARTIFACT]`: no model call, no write."""
    ref = args.run
    try:
        if ref is None or Path(ref).is_file():
            record = read_run(Path(ref) if ref else ARTIFACT)
        else:
            record = in_store(lambda settings: _stored_run(settings, ref))
    except ArtifactError as exc:
        raise CliError(str(exc)) from exc
    try:
        print(render_replay(replay(record, max_repeat=args.max, threshold=args.threshold,
                                   confidence=args.confidence)))
    except ReplayError as exc:
        raise CliError(f"repeat-rule: {exc}") from exc
    return 0


async def _stored_run(settings: Settings, ref: str) -> RunRecord:
    async with open_store(settings) as store:
        return await store.load_run(ref)
