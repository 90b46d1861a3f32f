"""The language detector of the checks that read words (evals/checks/_language.py) on a blind
set of answers whose every sentence a writer labelled with its language
(evals/calibration/language-blind.yaml): per language, how many answers holding it a check
that reads English would still read, as shipped (quick models first) and with the full models
alone; and how many answers the quick models decided alone (no 2 s load of the full ones).

    python -m evals.bench.languages [--set FILE] [--show]     (make bench-languages)

An answer counts as English when every sentence is English or no language's (names, figures).
A greeting of fewer than SENTENCE_LETTERS letters in another language is not read on its own,
by design: the answer's claims are in English. `--show` lists every answer holding another
language that is read as English, with its foreign sentences.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evals.checks import _language
from evals.load.yamlfile import read_items

LANGUAGE_SET = Path(__file__).resolve().parents[1] / "calibration" / "language-blind.yaml"
Code = Literal["en", "es", "fr", "de", "it", "nl", "pt", "pl", "vi", "zh", "ja", "ko", "ar",
               "ru", "tr", "hi", "uk", "sv", "id", "el", "none"]


class Sentence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    lang: Code


class Labelled(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    sentences: list[Sentence]
    note: str = ""

    @property
    def foreign(self) -> set[str]:
        return {str(s.lang) for s in self.sentences} - {"en", "none"}


def _full_models_asked() -> int:
    info = _language._detector.cache_info()
    return info.hits + info.misses


def _decide(items: list[Labelled], *, quick: bool) -> tuple[list[bool], int]:
    """Whether a check that reads English reads each answer, and how many answers the quick
    models decided alone."""
    _language.reading.cache_clear()
    _language._reading_for.cache_clear()
    alone = 0
    plainly = _language._plainly_english
    try:
        if not quick:
            _language._plainly_english = lambda words: False  # type: ignore[assignment]
        read = []
        for item in items:
            asked = _full_models_asked()
            read.append(_language.unreadable(item.text, "en") is None)
            alone += _full_models_asked() == asked
    finally:
        _language._plainly_english = plainly  # type: ignore[method-assign]
        _language.reading.cache_clear()
        _language._reading_for.cache_clear()
    return read, alone


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench.languages", description=__doc__)
    p.add_argument("--set", type=Path, default=LANGUAGE_SET, help="a labelled set")
    p.add_argument("--show", action="store_true",
                   help="also every answer holding another language that is read as English")
    args = p.parse_args(argv)
    found, errors = read_items(args.set, Labelled, "the file must be a list of answers",
                               "the answer")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 2
    items = [item for item, _ in found]
    shipped, alone = _decide(items, quick=True)
    full, _ = _decide(items, quick=False)
    print(f"{args.set.name}: {len(items)} answers; the quick models decided {alone} alone")
    print(f"{'language':10} {'answers':>8} {'read as English':>16} {'full models alone':>18}")
    english = [i for i, item in enumerate(items) if not item.foreign]
    print(f"{'en only':10} {len(english):>8} {sum(shipped[i] for i in english):>16}"
          f" {sum(full[i] for i in english):>18}")
    holding = Counter(lang for item in items for lang in item.foreign)
    for lang, n in sorted(holding.items(), key=lambda kv: (-kv[1], kv[0])):
        idx = [i for i, item in enumerate(items) if lang in item.foreign]
        print(f"{lang:10} {n:>8} {sum(shipped[i] for i in idx):>16}"
              f" {sum(full[i] for i in idx):>18}")
    changed = sum(a != b for a, b in zip(shipped, full, strict=True))
    print(f"answers decided otherwise than by the full models alone: {changed}")
    if args.show:
        for item, was_read in zip(items, shipped, strict=True):
            if item.foreign and was_read:
                odd = "; ".join(f"{s.lang}: {s.text}" for s in item.sentences
                                if s.lang not in ("en", "none"))
                print(f"  read as English: {item.text[:90]!r} ({odd})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
