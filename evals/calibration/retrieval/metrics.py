"""The figures of a retrieval set, from rankings alone (no I/O): recall@k, MRR, and how many
questions search should have no answer for got a passage it scored like a real answer.

A rank is 1-based: the position of the first result that answers the question, None when none
of the results does. A best score is the top result's score in the mode's own scale, None when
the search returned nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from typing import TypeVar

T = TypeVar("T")


def first_hit(found: Sequence[T], expected: Collection[T]) -> int | None:
    """The rank of the first result that is a right one (a manual's page, a machine's
    slug), or None."""
    return next((rank for rank, hit in enumerate(found, start=1) if hit in expected), None)


def recall_at(ranks: Sequence[int | None], k: int) -> float | None:
    """The share of questions answered within the first k results (None: no questions)."""
    if not ranks:
        return None
    return sum(r is not None and r <= k for r in ranks) / len(ranks)


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float | None:
    """The mean of 1/rank, a question with no answering result counting 0."""
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


def threshold(answerable_best: Sequence[float | None]) -> float | None:
    """The median best score of the answerable questions; None when the median is "no
    result" (at least half of them got nothing) or there are none."""
    if not answerable_best:
        return None
    # No result sorts below every score.
    median = statistics.median([-math.inf if s is None else s for s in answerable_best])
    return None if median == -math.inf else median


def confident(best: float | None, at_least: float | None) -> bool:
    """Search looked as sure as it is of a typical real answer: a result scoring at or above
    the threshold (any result, when the threshold is "no result"). A tie counts: the score
    cannot tell the two apart. No result at all is never confident."""
    return best is not None and (at_least is None or best >= at_least)
