"""The judge's scores beside raters': the table, exact and within-one agreement, the judge's
lean, quadratic weighted kappa on the scale's places (half points are steps), and the same
floor and undefined case as verdicts."""

import pytest

from evals.calibration.scores import Scored, calibrate_scores, render_scores, scores_json

SIX = (1, 2, 3, 4, 5, 6)
HALVES = tuple(n / 2 for n in range(2, 11))


def scored(pairs):
    return [Scored(f"e{i:02d}", r, j, f"reason {i}") for i, (r, j) in enumerate(pairs)]


def by_formula(pairs, scale):
    """Quadratic weighted kappa written out: 1 - sum(w·observed) / sum(w·expected by chance),
    w the squared distance between places on the scale."""
    place = {v: i for i, v in enumerate(scale)}
    n = len(pairs)
    raters = [place[r] for r, _ in pairs]
    judge = [place[j] for _, j in pairs]
    observed = sum((r - j) ** 2 for r, j in zip(raters, judge, strict=True)) / n
    expected = sum((r - j) ** 2 for r in raters for j in judge) / n ** 2
    return 1 - observed / expected


def test_figures_from_twelve_scored_essays():
    pairs = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6),
             (2, 3), (3, 4), (4, 3), (5, 6), (1, 4), (6, 4)]
    c = calibrate_scores(scored(pairs) + [Scored("e99", 3, None, "unreadable")], SIX)
    assert c.rated == 12 and c.unrated == ["e99"]
    assert c.exact == pytest.approx(6 / 12) and c.within_one == pytest.approx(10 / 12)
    assert c.mean_difference == pytest.approx(sum(j - r for r, j in pairs) / 12)
    assert c.qwk == pytest.approx(by_formula(pairs, SIX))
    from sklearn.metrics import cohen_kappa_score  # 0.8 s: not in every worker's collection

    assert c.qwk == pytest.approx(cohen_kappa_score([r for r, _ in pairs], [j for _, j in pairs],
                                                    weights="quadratic"))
    assert c.table["1"]["4"] == 1 and c.table["6"]["4"] == 1 and c.table["3"]["3"] == 1
    assert [d["id"] for d in c.far] == ["e10", "e11"]  # more than one point apart
    text = render_scores(c, "== score")
    assert "raters \\ judge" in text and "quadratic weighted kappa: 0.7" in text
    assert "exact agreement: 50% · within one point: 83% · judge minus raters: +0.25" in text
    assert "≠ e10: raters 1, judge 4 — reason 10" in text
    assert "judge could not score (left out): e99" in text
    assert '"qwk": 0.7' in scores_json(c)


def test_half_points_are_steps_of_the_scale():
    pairs = [(1.0, 1.5), (2.0, 2.0), (2.5, 3.0), (3.0, 3.0), (3.5, 3.5), (4.0, 3.5),
             (4.5, 4.5), (5.0, 4.5), (2.0, 1.5), (3.0, 4.0)]
    c = calibrate_scores(scored(pairs), HALVES)
    assert c.qwk == pytest.approx(by_formula(pairs, HALVES))
    assert c.within_one == 1.0 and c.exact == pytest.approx(0.4)
    assert list(c.table) == ["1", "1.5", "2", "2.5", "3", "3.5", "4", "4.5", "5"]


def test_too_few_and_all_alike_report_no_kappa():
    few = calibrate_scores(scored([(3, 3)] * 9), SIX)
    assert few.qwk is None and few.exact is None and "9 rated text(s): below 10" in few.note
    alike = calibrate_scores(scored([(3, 3)] * 10), SIX)
    assert alike.exact == 1.0 and alike.qwk is None and "kappa is undefined" in alike.note
