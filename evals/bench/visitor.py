"""The simulator checks against the labelled visitor transcripts
(evals/calibration/visitor-transcripts.yaml, written blind): per failure kind, what the
detectors flag against what a reader labelled, and the whole conversations caught, missed and
falsely flagged.

    python -m evals.bench.visitor [--set FILE] [--show]       (make bench-visitor)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.calibration.visitor_set import (
    VISITOR_SET,
    VisitorSetError,
    load_transcripts,
    measure,
    render,
)
from evals.checks.visitor import check_visitor


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench.visitor", description=__doc__)
    p.add_argument("--set", type=Path, default=VISITOR_SET)
    p.add_argument("--show", action="store_true",
                   help="also each transcript's labels and what the detectors said")
    args = p.parse_args(argv)
    try:
        transcripts = load_transcripts(args.set)
    except VisitorSetError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(render(measure(transcripts)))
    if args.show:
        for t in transcripts:
            said = check_visitor(t.as_turns(), None)
            labels = ", ".join(f"{f.kind}@{f.turn}" for f in t.failures) or "clean"
            print(f"{t.id}: labelled {labels}; found: {said.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
