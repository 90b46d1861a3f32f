"""`python -m evals online`: the checks that need no case author on the app's recorded,
consented turns, stored, and their trend. What it does is evals.api.online's; this parses,
calls and prints."""

from __future__ import annotations

import argparse

from evals.api.online import online_trend, sample
from evals.cli.common import CliError, Commands, date_arg
from evals.report.online_trend import render_trend


def register(sub: Commands) -> None:
    p = sub.add_parser("online", help="the checks on live traffic: consented turns, checked,"
                                      " stored, and their trend")
    p.add_argument("--since", type=date_arg,
                   help="only turns answered from this date (YYYY-MM-DD)")
    p.add_argument("--limit", type=int, default=200,
                   help="check at most this many turns not checked yet, newest first"
                        " (default 200)")
    p.add_argument("--trend-only", action="store_true",
                   help="check nothing new: print the trend of what is stored")
    p.add_argument("--by", choices=("week", "agent", "both"), default="both",
                   help="group the trend per ISO week, per deployed agent (within an audience"
                        " and page), or both; the exit is 1 when a newest group is flagged")
    p.set_defaults(handler=online_command)


def online_command(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 10_000:
        raise CliError(f"--limit must be 1 to 10000, not {args.limit}")
    if not args.trend_only:
        done = sample(args.limit, args.since)
        failed = sum(v.verdict == "fail" for v in done.verdicts)
        print(f"online: {done.consented} consented turn(s) · {done.checked} checked now ·"
              f" {done.already} checked before under this harness · {done.stored}"
              f" verdict(s) stored, {failed} fail(s)"
              + (f" · {done.unreadable} stored turn(s) the checks could not read (undecided)"
                 if done.unreadable else ""))
    shown = online_trend(args.since)
    left = [f"{shown.other_harness} under another harness"] if shown.other_harness else []
    left += [f"{shown.withdrawn} of conversations whose consent was withdrawn"] \
        if shown.withdrawn else []
    if left:
        print(f"trend: {shown.verdicts} verdict(s) read; left out: {'; '.join(left)}")
    if args.by in ("week", "both"):
        print("\nper week\n" + render_trend(shown.by_week, shown.noise))
    if args.by in ("agent", "both"):
        print("\nper deployed agent (model and system prompt)\n"
              + render_trend(shown.by_agent, shown.noise))
    return 1 if shown.flagged_now else 0
