"""The simulator checks against the labelled visitor transcripts
(evals/calibration/visitor-transcripts.yaml and visitor-transcripts-2.yaml, each written
blind): per failure kind, what the
detectors flag against what a reader labelled, and the whole conversations caught, missed and
falsely flagged.

    python -m evals.bench.visitor [--set FILE ...] [--show]     (make bench-visitor)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.calibration.visitor_set import (
    VISITOR_SET,
    VISITOR_SET_2,
    Transcript,
    VisitorSetError,
    load_transcripts,
    measure,
    render,
)
from evals.checks.visitor import check_visitor


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench.visitor", description=__doc__)
    p.add_argument("--set", type=Path, action="append",
                   help="a labelled set (default: both shipped sets)")
    p.add_argument("--show", action="store_true",
                   help="also each transcript's labels and what the detectors said")
    args = p.parse_args(argv)
    for n, path in enumerate(args.set or [VISITOR_SET, VISITOR_SET_2]):
        try:
            transcripts = load_transcripts(path)
        except VisitorSetError as exc:
            print(exc, file=sys.stderr)
            return 2
        print(("\n" if n else "") + render(measure(transcripts), path))
        if args.show:
            show(transcripts)
    return 0


def show(transcripts: list[Transcript]) -> None:
    for t in transcripts:
        said = check_visitor(t.as_turns())
        labels = ", ".join(f"{f.kind}@{f.turn}" for f in t.failures) or "clean"
        print(f"{t.id}: labelled {labels}; found: {said.describe()}")


if __name__ == "__main__":
    sys.exit(main())
