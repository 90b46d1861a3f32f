"""`python -m evals settings [--write]`: every environment variable of the app and the suite,
as docs/settings.md holds it (generated from the settings objects)."""

from __future__ import annotations

import argparse

from evals.cli.common import Commands
from evals.record.artifact import write_atomically
from evals.settings import SETTINGS_PAGE, settings_page


def register(sub: Commands) -> None:
    s = sub.add_parser("settings", help="every environment variable, as docs/settings.md")
    s.add_argument("--write", action="store_true", help=f"write {SETTINGS_PAGE.name} instead"
                   " of printing it")
    s.set_defaults(handler=settings)


def settings(args: argparse.Namespace) -> int:
    page = settings_page()
    if args.write:
        write_atomically(SETTINGS_PAGE, page)
        print(f"settings: {SETTINGS_PAGE}")
    else:
        print(page, end="")
    return 0
