"""The personal-data scrubber of `from-conversations` against the labelled turns
(evals/calibration/pii*.yaml): recall and precision per kind and overall, and every decoy
(a machine, room, ticket, date, time, part or measure) it removed.

    python -m evals.bench.pii [--set FILE] [--misses]       (make bench-pii)

It measures pii.yaml, the set the scrubber was adjusted on, then pii-holdout.yaml, written
before the adjustments and never used for them, then pii-blind.yaml, written blind in several
languages (with tool-call arguments and student ids) and measured before any change.

A planted item counts as found when every letter and digit of it is inside what was replaced
(a surname left behind is a miss), whatever kind it was replaced as; a replacement counts as
right when it overlaps a planted item. The detectors run as from-conversations runs them,
protecting the catalogue's machine names, with no lab records (so no names from them).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from evals.authoring.pii import KINDS, Detectors, Found, catalogue_phrases
from evals.calibration.pii_set import PII_SETS, Span, load_turns, spans

TARGET_RECALL = 0.98


def covered(span: Span, found: list[Found]) -> bool:
    return all(any(f.start <= i < f.end for f in found)
               for i in range(span.start, span.end) if span.text[i - span.start].isalnum())


def overlaps(span: Span | Found, found: list[Found]) -> list[Found]:
    return [f for f in found if f.start < span.end and span.start < f.end]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench.pii")
    parser.add_argument("--set", type=Path, action="append",
                        help="a labelled set (default: pii.yaml, pii-holdout.yaml, pii-blind.yaml)")
    parser.add_argument("--misses", action="store_true", help="also list every miss")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    detectors = Detectors(keep=catalogue_phrases())
    detectors.find("Warm-up, Jordan Rivera.")  # loads spaCy and Presidio
    print(f"detectors loaded in {time.perf_counter() - started:.1f} s")
    for path in args.set or PII_SETS:
        measure(detectors, path, args.misses)
    return 0


def measure(detectors: Detectors, path: Path, misses: bool) -> None:
    """Print the figures of one labelled set."""
    turns = load_turns(path)
    started = time.perf_counter()
    planted, hit, replaced, right = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    decoys_total, removed, missed, wrong = 0, [], [], []
    for turn in turns:
        found = (detectors.find_arguments(turn.text) if turn.where == "tool_args"
                 else detectors.find(turn.text))
        pii = spans(turn.text, turn.pii)
        for p in pii:
            planted[p.kind] += 1
            if covered(p, found):
                hit[p.kind] += 1
            else:
                missed.append(f"  {turn.id}: {p.kind} {p.text!r} ->"
                              f" {[turn.text[f.start:f.end] for f in overlaps(p, found)]}")
        for f in found:
            replaced[f.kind] += 1
            if overlaps(f, [Found(p.start, p.end, p.kind) for p in pii]):
                right[f.kind] += 1
            else:
                wrong.append(f"  {turn.id}: {f.kind} {turn.text[f.start:f.end]!r}")
        for d in spans(turn.text, turn.keep):
            decoys_total += 1
            cut = overlaps(d, found)
            if cut:
                removed.append(f"  {turn.id}: {d.kind} {d.text!r} (replaced as "
                               + ", ".join(f"{f.kind} {turn.text[f.start:f.end]!r}"
                                           for f in cut) + ")")
    elapsed = time.perf_counter() - started
    print(f"\n{path.name}: {len(turns)} turns, {sum(planted.values())} planted items,"
          f" {decoys_total} decoys, scanned in {elapsed:.2f} s")
    print(f"{'kind':10} {'planted':>7} {'found':>5} {'recall':>7} {'replaced':>8} {'right':>5}"
          f" {'precision':>9}")

    def row(name: str, n: int, h: int, r: int, ok: int) -> None:
        recall = f"{h / n:.3f}" if n else "—"
        precision = f"{ok / r:.3f}" if r else "—"
        print(f"{name:10} {n:>7} {h:>5} {recall:>7} {r:>8} {ok:>5} {precision:>9}")

    for kind in [*KINDS, *sorted(set(planted) - set(KINDS))]:
        row(kind, planted[kind], hit[kind], replaced[kind], right[kind])
    row("overall", sum(planted.values()), sum(hit.values()), sum(replaced.values()),
        sum(right.values()))
    print(f"decoys removed: {len(removed)} of {decoys_total}")
    print("\n".join(removed) or "  none")
    print(f"replaced but not planted: {len(wrong)}")
    print("\n".join(wrong) or "  none")
    if misses:
        print(f"planted but not (wholly) replaced: {len(missed)}")
        print("\n".join(missed) or "  none")
    recall = sum(hit.values()) / max(1, sum(planted.values()))
    protected = [r for r in removed if ": machine " in r or ": ticket " in r]
    met = recall >= TARGET_RECALL and not protected
    print(f"target (recall >= {TARGET_RECALL}, no machine name or ticket id removed):"
          f" {'met' if met else 'not met'}")


if __name__ == "__main__":
    sys.exit(main())
