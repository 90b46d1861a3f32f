"""The retrieval figures on rankings made by hand."""

import pytest

from evals.calibration.retrieval.metrics import (
    confident,
    first_hit,
    mean_reciprocal_rank,
    recall_at,
    threshold,
)

F4 = "Form 4 Manual"


def test_first_hit_is_the_rank_of_the_first_result_on_an_expected_page():
    found = [(F4, 4), (F4, 2), (F4, 3), (F4, 2)]
    assert first_hit(found, frozenset({(F4, 2)})) == 2
    assert first_hit(found, frozenset({(F4, 3), (F4, 2)})) == 2  # any expected page
    assert first_hit(found, frozenset({(F4, 4)})) == 1
    assert first_hit(found, frozenset({("Trotec Speedy 400 SOP", 2)})) is None  # page, manual
    assert first_hit([], frozenset({(F4, 1)})) is None


def test_recall_and_mrr_by_hand():
    # Five questions: answered first, third, sixth, second, and not at all.
    ranks = [1, 3, 6, 2, None]
    assert recall_at(ranks, 1) == pytest.approx(1 / 5)
    assert recall_at(ranks, 5) == pytest.approx(3 / 5)
    assert recall_at(ranks, 10) == pytest.approx(4 / 5)
    assert mean_reciprocal_rank(ranks) == pytest.approx((1 + 1 / 3 + 1 / 6 + 1 / 2 + 0) / 5)
    assert recall_at([], 1) is None and mean_reciprocal_rank([]) is None


def test_the_threshold_is_the_median_best_score_with_no_result_lowest():
    assert threshold([0.9, 0.2, 0.5]) == 0.5
    assert threshold([0.9, 0.2, 0.5, 0.7]) == pytest.approx(0.6)
    assert threshold([0.9, None, 0.5]) == 0.5
    assert threshold([0.9, None, None]) is None  # most got nothing: the median is no result
    assert threshold([0.9, None]) is None
    assert threshold([]) is None


def test_confident_means_at_or_above_the_threshold_and_no_result_never_is():
    assert confident(0.6, 0.5) and confident(0.5, 0.5)  # a tie cannot be told apart
    assert not confident(0.4, 0.5)
    assert not confident(None, 0.5) and not confident(None, None)
    assert confident(0.01, None)  # the median is "no result": any result is as sure
