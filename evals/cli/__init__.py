"""`python -m evals`: run the suite (`make eval`), compare versions, gate a change, re-score.

    python -m evals [run] [--cases FILE_OR_ID,...] [--group G] [--model ID] [--repeat K|auto[:MAX]]
    python -m evals run --failed [RUN] | runs | resume [RUN] | list [--groups]
    python -m evals point save NAME [--from-run RUN] | point list | point show NAME
    python -m evals compare NAME [--model ID] [--adopt-plan] | compare --runs A B
    python -m evals gate [--model ID] [--against NAME] [--hard FILES]
    python -m evals impact [--against POINT|RUN] [--cases FILE_OR_ID,...] [--model ID]
    python -m evals report [RUN] --html FILE | rescore [RUN | ARTIFACT] [--cases FILE_OR_DIR]
    python -m evals repeat-rule [RUN | ARTIFACT] [--max N] [--threshold T] [--confidence C]
    python -m evals accuracy [LABELLED]
    python -m evals retrieval [LABELLED] [--embedder default|hash] [--json] [--verbose]
    python -m evals calibrate (RESULTS LABELS | --set makerspace | --set mrbench --file F) [--save]
    python -m evals calibrate --labels [--judge-model ID] [--prompt-hash H] [--pack P] [--save]
    python -m evals rejudge RUN --judge-model ID [--pack PACK/NAME] [--advisory-judge]
    python -m evals labels export FILE | labels import FILE
    python -m evals run --suite mrbench --file F [--limit N] --endpoint URL --endpoint-model ID
    python -m evals prompt [--as ROLE] [--page PATH] [--selection NAMES] [--json]
    python -m evals draft [--as ROLE] [--page PATH] [--capability NAME] [--count 8] [--out F]
    python -m evals from-conversations | workspace | mcp | settings [--write]
    python -m evals schema [--check | --print NAME]
    python -m evals cache stats | cache clear [--model ID] [--expired]

Every run flag has an environment variable (EVAL_CASES, EVAL_GROUPS, EVAL_MODEL,
EVAL_CONCURRENCY, EVAL_REPEAT, …): docs/settings.md lists them all.

Each command group is a module of this package that registers its subcommands (`register`)
and their handlers; a handler that cannot go on raises CliError, said once here (exit 2).
"""

from __future__ import annotations

import argparse
import logging
import sys

from evals.cli import (
    authoring,
    cache,
    calibration,
    impact,
    labels,
    mcp,
    rejudge,
    report,
    retrieval,
    run,
    schema,
    settings,
    versions,
    workspace,
)
from evals.cli.common import CliError
from evals.settings import EvalSettingsError

GROUPS = (run, versions, impact, report, calibration, rejudge, labels, retrieval, authoring,
          workspace, mcp, settings, schema, cache)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command")
    for group in GROUPS:
        group.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A database that stops answering is said once, by the run store and the run's watchdog;
    # psycopg's own warnings would repeat it on every reconnection and cancelled query.
    logging.getLogger("psycopg").setLevel(logging.ERROR)
    try:
        p = parser()
        if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
            argv = ["run", *argv]  # `python -m evals [flags]` is `python -m evals run [flags]`
        try:
            args = p.parse_args(argv)
            if args.command is None:
                args = p.parse_args(["run", *argv])
        except SystemExit as exc:  # argparse said what was wrong (or printed --help)
            return int(exc.code or 0)
        return int(args.handler(args))
    except (CliError, EvalSettingsError) as exc:
        print(exc, file=sys.stderr)
        return 2
