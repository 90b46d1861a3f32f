"""What the checks cost per answer, on the labelled answers (one process, the parse cache
cleared between rounds so every answer is parsed afresh).

    python -m evals.bench.checks [--rounds 3]

It prints spaCy's import and the pinned pipeline's load, then per kind the mean milliseconds
one check of one answer takes, and for the two kinds that read the dependency parse how much of
parsing every sentence of the answer afresh costs (the check itself may parse fewer: a
sentence that names no machine is not parsed for no_unknown_tools).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict

from evals.calibration.accuracy import load_items, measure
from evals.checks import _parse
from evals.checks._text import sentences

PARSED = ("no_unknown_tools", "not_claimed_done")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench.checks")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    import spacy  # noqa: F401  (timed: the parse-based checks pay it once per process)
    imported = time.perf_counter()
    _parse.nlp()
    loaded = time.perf_counter()
    print(f"spaCy import {1000 * (imported - started):.0f} ms, "
          f"pipeline load and check {1000 * (loaded - imported):.0f} ms")

    items = load_items()
    per_kind: dict[str, list[float]] = defaultdict(list)
    parse_ms: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        for where, item in items:
            kind = item.check["kind"]
            _parse.parse.cache_clear()
            if kind in PARSED:
                t = time.perf_counter()
                for sentence in sentences(item.answer):
                    _parse.parse(sentence)
                parse_ms[kind].append(1000 * (time.perf_counter() - t))
                _parse.parse.cache_clear()
            t = time.perf_counter()
            measure([(where, item)])
            per_kind[kind].append(1000 * (time.perf_counter() - t))
    print(f"{len(items)} labelled answers × {args.rounds} rounds")
    print(f"{'kind':22} {'answers':>7} {'ms/answer':>10} {'parse/answer':>12}")
    for kind in sorted(per_kind):
        times = per_kind[kind]
        parse = f"{statistics.mean(parse_ms[kind]):.2f}" if kind in parse_ms else "—"
        print(f"{kind:22} {len(times) // args.rounds:7} {statistics.mean(times):10.2f} "
              f"{parse:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
