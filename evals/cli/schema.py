"""`python -m evals schema [--check | --print NAME]`: the JSON Schemas of the run record and of
the case and scenario files (evals/schemas/), generated from the pydantic models that read them,
and the line at the top of every case and scenario file that names its schema for an editor.

`schema` writes each schema that changed and adds (or corrects) a file's schema line; `--check`
writes nothing and exits 1 naming each stale schema and each file without its line (for CI; a
test does the same); `--print NAME` writes one schema to stdout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.cli.common import Commands
from evals.load.schema import FILE_SCHEMAS, item_files, names_schema, schema_line, with_schema_line
from evals.record.artifact import write_atomically
from evals.record.schema import RUN_RECORD, Published
from evals.settings import PROJECT_ROOT

SCHEMAS: tuple[Published, ...] = (RUN_RECORD, *FILE_SCHEMAS)


def register(sub: Commands) -> None:
    s = sub.add_parser("schema", help="the JSON Schemas of the run record and the case and"
                       " scenario files (evals/schemas/), from the models")
    mode = s.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 naming each stale schema and each case or"
                      " scenario file that does not name its schema on its first line")
    mode.add_argument("--print", dest="show", metavar="NAME",
                      choices=[p.name for p in SCHEMAS],
                      help=f"write one schema to stdout ({', '.join(p.name for p in SCHEMAS)})")
    s.set_defaults(handler=schema_command)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def stale_schemas() -> list[Published]:
    """The schemas whose committed file is missing or differs from what the models generate."""
    return [p for p in SCHEMAS if p.stale()]


def unnamed_files() -> list[tuple[Path, str]]:
    """Each case or scenario file whose first line is not the one naming its schema, with that
    line (a file that is not UTF-8 is the loader's to report)."""
    out = []
    for path in item_files():
        line = schema_line(path)
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not names_schema(text, line):
            out.append((path, line))
    return out


def schema_command(args: argparse.Namespace) -> int:
    if args.show:
        print(next(p for p in SCHEMAS if p.name == args.show).text(), end="")
        return 0
    stale, unnamed = stale_schemas(), unnamed_files()
    if args.check:
        for p in stale:
            what = "stale (the models say otherwise)" if p.path.exists() else "missing"
            print(f"{_shown(p.path)}: {what}; run `python -m evals schema`", file=sys.stderr)
        for path, line in unnamed:
            print(f"{_shown(path)}:1: does not name its schema; its first line should be"
                  f" `{line}` (`python -m evals schema` adds it)", file=sys.stderr)
        if stale or unnamed:
            return 1
        print(f"the {len(SCHEMAS)} schemas are up to date, and every case and scenario file"
              " names its own")
        return 0
    for p in stale:
        p.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(p.path, p.text())
        print(f"wrote {_shown(p.path)}")
    for path, line in unnamed:
        write_atomically(path, with_schema_line(path.read_bytes().decode("utf-8"), line))
        print(f"named its schema on the first line of {_shown(path)}")
    if not stale and not unnamed:
        print(f"the {len(SCHEMAS)} schemas were up to date, and every case and scenario file"
              " names its own: nothing written")
    return 0
