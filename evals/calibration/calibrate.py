"""Checking the judge against people: a person's verdicts beside the judge's.

    python -m evals calibrate results.json labels.json [--json] [--save]
    python -m evals calibrate --set makerspace [--judge-model ID] [--save]
    python -m evals calibrate --set mrbench --file MRBench_V2.json [--judge-model ID] [--limit 30]

Reports the confusion table (person pass/fail × judge pass/fail), every disagreement with the
judge's reason, the share of agreement and Cohen's kappa (scikit-learn). Below
CALIBRATION_MIN_CASES rated cases the estimate is too unsteady to report: only the table and
the disagreements are given. Cases the judge could not rate and labels with no result are
listed and left out. When everyone gave one verdict, kappa is undefined and said so.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.redact import redact
from evals.record.artifact import ArtifactError, read_record
from evals.record.run import RunRecord

CALIBRATION_MIN_CASES = 10
VERDICTS = ("pass", "fail")


class CalibrationError(ValueError):
    """A results or labels file that cannot be used; the message names it."""


@dataclass
class Rated:
    id: str
    judge: str | None  # None: the judge could not rate it
    reason: str


@dataclass
class Calibration:
    table: dict[str, dict[str, int]]  # person verdict -> judge verdict -> count
    disagreements: list[dict[str, str]]
    rated: int
    agreement: float | None
    kappa: float | None
    note: str
    unrated: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    labels_without_result: list[str] = field(default_factory=list)


def calibrate(rated: list[Rated], labels: dict[str, str]) -> Calibration:
    """Compare the judge's verdicts with a person's labels (case id -> pass/fail)."""
    by_id = {r.id: r for r in rated}
    table = {p: {j: 0 for j in VERDICTS} for p in VERDICTS}
    person, judge, disagreements, unrated = [], [], [], []
    for case_id, label in sorted(labels.items()):
        r = by_id.get(case_id)
        if r is None:
            continue
        if r.judge is None:
            unrated.append(case_id)
            continue
        table[label][r.judge] += 1
        person.append(label)
        judge.append(r.judge)
        if label != r.judge:
            disagreements.append({"id": case_id, "person": label, "judge": r.judge,
                                  "reason": r.reason})
    n = len(person)
    result = Calibration(table, disagreements, n, None, None, "",
                         unrated=unrated,
                         unlabelled=sorted(set(by_id) - set(labels)),
                         labels_without_result=sorted(set(labels) - set(by_id)))
    if n < CALIBRATION_MIN_CASES:
        result.note = (f"{n} rated case(s): below {CALIBRATION_MIN_CASES} the estimate is too"
                       " unsteady to report; read the table and the disagreements")
        return result
    result.agreement = sum(p == j for p, j in zip(person, judge, strict=True)) / n
    if len(set(person) | set(judge)) == 1:
        result.note = ("everyone gave every case the same verdict: kappa is undefined (no"
                       " variation to agree beyond chance)")
        return result
    # Imported here: sklearn.metrics takes 1.2 s to import (python -X importtime), and only a
    # calibration computes kappa.
    from sklearn.metrics import cohen_kappa_score

    kappa = float(cohen_kappa_score(person, judge, labels=list(VERDICTS)))
    if math.isnan(kappa):
        result.note = "kappa is undefined for these verdicts"
    else:
        result.kappa = kappa
        result.note = ("kappa is agreement beyond chance: 1 full, 0 no better than chance;"
                       " read it with the agreement and the table")
    return result


def _check_labels(labels: Any, where: str) -> dict[str, str]:
    if not isinstance(labels, dict):
        raise CalibrationError(f"{where}: labels are a JSON object of case id -> pass/fail")
    bad = {k: v for k, v in labels.items() if v not in VERDICTS}
    if bad:
        raise CalibrationError(f"{where}: labels must be 'pass' or 'fail'; got {bad}")
    return labels


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{path}: {exc}") from exc


def _record(data: Any, where: str) -> RunRecord:
    try:
        return read_record(data, where)
    except ArtifactError as exc:
        raise CalibrationError(f"not a run artifact: {exc}") from exc


def rated_from(record: RunRecord) -> list[Rated]:
    """The judge's verdict on each judged case of a run: its first attempt's judged check."""
    rated = []
    for case in record.cases:
        for attempt in case.attempts[:1]:
            for check in attempt.checks:
                if check.judged and check.judge is not None:
                    rated.append(Rated(case.id, check.judge.verdict, check.reason))
    return rated


def judge_of(record: RunRecord) -> tuple[str | None, str | None]:
    """The judge model and prompt hash a run's verdicts were given under (None if mixed)."""
    models: set[str | None] = set()
    hashes: set[str | None] = set()
    for case in record.cases:
        for attempt in case.attempts[:1]:
            for check in attempt.checks:
                if check.judged and check.judge is not None:
                    models.add(check.judge.model or None)
                    hashes.add(check.judge.prompt_hash or None)
    model = next(iter(models)) if len(models) == 1 else None
    prompt = next(iter(hashes)) if len(hashes) == 1 else None
    return model, prompt


def load(results: Path, labels: Path) -> tuple[RunRecord, list[Rated], dict[str, str]]:
    """A run's record, its judge's verdicts, and people's labels for them."""
    record = _record(_read_json(results), str(results))
    return record, rated_from(record), _check_labels(_read_json(labels), str(labels))


def render(c: Calibration, title: str = "") -> str:
    lines = [title] if title else []
    lines += [
        "                judge pass  judge fail",
        f"person pass     {c.table['pass']['pass']:>10}  {c.table['pass']['fail']:>10}",
        f"person fail     {c.table['fail']['pass']:>10}  {c.table['fail']['fail']:>10}",
        f"rated: {c.rated}",
    ]
    if c.agreement is not None:
        lines.append(f"agreement: {c.agreement:.0%}")
    if c.kappa is not None:
        lines.append(f"Cohen's kappa: {c.kappa:.2f}")
    lines.append(c.note)
    for d in c.disagreements:
        lines.append(f"  ≠ {d['id']}: person {d['person']}, judge {d['judge']} — {d['reason']}")
    for name, ids in (("judge could not rate (left out)", c.unrated),
                      ("labels with no result (left out)", c.labels_without_result)):
        if ids:
            lines.append(f"{name}: {', '.join(ids)}")
    return redact("\n".join(lines))  # a judge's reason may quote what it judged


def to_json(c: Calibration) -> str:
    """The calibration as JSON, redacted as the report is."""
    return redact(json.dumps(asdict(c), indent=2))
