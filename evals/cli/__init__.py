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
and their handlers, which parse, call evals.api and print; what cannot go on raises ApiError
(CliError for a flag), said once here (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable
from types import ModuleType

from evals.api.errors import ApiError
from evals.settings import EvalSettingsError

# Each command's group: the module imported when that command runs, and only then (a test
# holds this table to what each module registers). In this order on --help.
COMMANDS = {
    "run": "run", "resume": "run", "runs": "run", "list": "run", "needs-local-model": "run",
    "point": "versions", "compare": "versions", "gate": "versions", "impact": "impact",
    "report": "report", "rescore": "report", "repeat-rule": "report",
    "accuracy": "calibration", "calibrate": "calibration", "rejudge": "rejudge",
    "labels": "labels", "retrieval": "retrieval", "prompt": "authoring", "draft": "authoring",
    "prepare": "authoring", "from-conversations": "authoring", "workspace": "workspace",
    "mcp": "mcp", "settings": "settings", "cache": "cache", "schema": "schema",
    "matrix": "matrix", "online": "online",
}


def group(name: str) -> ModuleType:
    """A command group's module (`run`, `versions`, …)."""
    return importlib.import_module(f"evals.cli.{name}")


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with `command`, only that command's group is imported and
    registered (every group for --help, a mistyped command, or none)."""
    p = argparse.ArgumentParser(prog="python -m evals", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command")
    names = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(
        COMMANDS.values()))
    for name in names:
        group(name).register(sub)
    return p


def main(argv: list[str] | None = None, *, started: Callable[[], None] | None = None) -> int:
    """The command line; `started` is called once the command's modules are imported and its
    arguments read, before it runs."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # A database that stops answering is said once, by the run store and the run's watchdog;
    # psycopg's own warnings would repeat it on every reconnection and cancelled query.
    logging.getLogger("psycopg").setLevel(logging.ERROR)
    try:
        if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
            argv = ["run", *argv]  # `python -m evals [flags]` is `python -m evals run [flags]`
        p = parser(argv[0])
        try:
            args = p.parse_args(argv)
        except SystemExit as exc:  # argparse said what was wrong (or printed --help)
            return int(exc.code or 0)
        if started is not None:
            started()
        return int(args.handler(args))
    except (ApiError, EvalSettingsError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a run stops gracefully on its own; anything else ends here
        print("interrupted", file=sys.stderr)
        return 130
