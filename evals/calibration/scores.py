"""A judge's scores beside trained raters' on an ordinal scale (the essay sets): the table
(rater score × judge score), exact agreement, agreement within one point, the mean difference
(the judge's lean) and quadratic weighted kappa (scikit-learn), the figure essay-scoring work
reports, which counts a near miss as a part agreement and a far miss as a strong disagreement.

As for verdicts (calibrate.py): below CALIBRATION_MIN_CASES rated texts the estimate is too
unsteady to report, and when everyone gave one score kappa is undefined and said so.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from evals.calibration.calibrate import CALIBRATION_MIN_CASES


@dataclass(frozen=True)
class Scored:
    id: str
    raters: float  # the raters' score
    judge: float | None  # None: the judge could not score it
    reason: str


@dataclass
class ScoreCalibration:
    scale: list[float]
    table: dict[str, dict[str, int]]  # raters' score -> judge's score -> count
    rated: int
    exact: float | None  # share with the same score
    within_one: float | None  # share at most one point apart
    mean_difference: float | None  # judge minus raters: above 0, the judge scores higher
    qwk: float | None
    note: str
    far: list[dict[str, str]] = field(default_factory=list)  # more than one point apart
    unrated: list[str] = field(default_factory=list)


def calibrate_scores(scored: list[Scored], scale: tuple[float, ...]) -> ScoreCalibration:
    """Compare the judge's scores with the raters' on `scale` (every score one of its values)."""
    table = {_key(r): {_key(j): 0 for j in scale} for r in scale}
    raters: list[float] = []
    judge: list[float] = []
    far, unrated = [], []
    for s in sorted(scored, key=lambda s: s.id):
        if s.judge is None:
            unrated.append(s.id)
            continue
        table[_key(s.raters)][_key(s.judge)] += 1
        raters.append(s.raters)
        judge.append(s.judge)
        if abs(s.judge - s.raters) > 1:
            far.append({"id": s.id, "raters": _key(s.raters), "judge": _key(s.judge),
                        "reason": s.reason})
    n = len(raters)
    result = ScoreCalibration(list(scale), table, n, None, None, None, None, "", far=far,
                              unrated=unrated)
    if n < CALIBRATION_MIN_CASES:
        result.note = (f"{n} rated text(s): below {CALIBRATION_MIN_CASES} the estimate is too"
                       " unsteady to report; read the table and the far misses")
        return result
    pairs = list(zip(raters, judge, strict=True))
    result.exact = sum(r == j for r, j in pairs) / n
    result.within_one = sum(abs(r - j) <= 1 for r, j in pairs) / n
    result.mean_difference = sum(j - r for r, j in pairs) / n
    if len(set(raters) | set(judge)) == 1:
        result.note = ("everyone gave every text the same score: kappa is undefined (no"
                       " variation to agree beyond chance)")
        return result
    # Imported here: sklearn.metrics takes 1.2 s to import, and only a calibration needs it.
    from sklearn.metrics import cohen_kappa_score

    # The scale's places, so that half points (ELLIPSE) are steps of one and every step of the
    # scale weighs in, even one nobody gave.
    place = {value: i for i, value in enumerate(scale)}
    qwk = float(cohen_kappa_score([place[r] for r in raters], [place[j] for j in judge],
                                  labels=list(range(len(scale))), weights="quadratic"))
    if math.isnan(qwk):
        result.note = "kappa is undefined for these scores"
    else:
        result.qwk = qwk
        result.note = ("quadratic weighted kappa: 1 full agreement, 0 no better than chance; a"
                       " miss weighs by the square of its distance")
    return result


def render_scores(c: ScoreCalibration, title: str = "") -> str:
    keys = [_key(s) for s in c.scale]
    width = max(5, *(len(k) for k in keys))
    lines = [title] if title else []
    lines.append("raters \\ judge " + " ".join(f"{k:>{width}}" for k in keys))
    for r in keys:
        lines.append(f"{r:>14} " + " ".join(f"{c.table[r][j]:>{width}}" for j in keys))
    lines.append(f"rated: {c.rated}")
    if c.exact is not None and c.within_one is not None and c.mean_difference is not None:
        lines.append(f"exact agreement: {c.exact:.0%} · within one point: {c.within_one:.0%}"
                     f" · judge minus raters: {c.mean_difference:+.2f}")
    if c.qwk is not None:
        lines.append(f"quadratic weighted kappa: {c.qwk:.2f}")
    lines.append(c.note)
    for d in c.far:
        lines.append(f"  ≠ {d['id']}: raters {d['raters']}, judge {d['judge']} — {d['reason']}")
    if c.unrated:
        lines.append(f"judge could not score (left out): {', '.join(c.unrated)}")
    return "\n".join(lines)


def scores_json(c: ScoreCalibration) -> str:
    return json.dumps(asdict(c), indent=2)


def _key(value: float) -> str:
    return f"{value:g}"
