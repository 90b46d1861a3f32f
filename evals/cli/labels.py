"""`python -m evals labels export FILE | import FILE`: people's labels of judged verdicts (the
workspace's Labels tab) as YAML, to review in a diff or carry to another store."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.settings import Settings
from evals.api.setup import in_store, open_store
from evals.calibration.label_file import LabelFileError, export_labels, import_labels
from evals.cli.common import CliError, Commands


def register(sub: Commands) -> None:
    labels = sub.add_parser("labels", help="people's labels of judged verdicts, as YAML")
    what = labels.add_subparsers(dest="labels_command", required=True)
    out = what.add_parser("export", help="write every stored label to FILE")
    out.add_argument("file", type=Path)
    out.set_defaults(handler=export_command)
    into = what.add_parser("import", help="store FILE's labels (all or none; none twice)")
    into.add_argument("file", type=Path)
    into.set_defaults(handler=import_command)


def export_command(args: argparse.Namespace) -> int:
    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            n = await export_labels(store, args.file)
        print(f"wrote {n} label(s) to {args.file}")
        return 0

    return in_store(body)


def import_command(args: argparse.Namespace) -> int:
    async def body(settings: Settings) -> int:
        async with open_store(settings) as store:
            try:
                new, known = await import_labels(store, args.file)
            except LabelFileError as exc:
                raise CliError(f"{args.file} was not imported (nothing was written):\n"
                               + "\n".join(f"  {line}" for line in exc.errors)) from exc
        print(f"imported {new} label(s) from {args.file}; {known} were stored already")
        return 0

    return in_store(body)
