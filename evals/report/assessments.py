"""A stored run's assessments (rescores and re-judgings, evals/record/assessment.py) read beside
the run's own results: per assessed check, what the run recorded and what the assessment gave;
per stored case, its status then and under the assessment. Nothing here changes either side.

A re-judging gives the judged checks it replaced their places, so each is paired with the
run's check at that place. A rescore runs today's checks, which may be more, fewer or others
than the run's: each is paired with the run's check of the same kind in the same attempt, the
n-th of a kind with the n-th, and a check on one side only is shown against a dash. Only what
an assessment gave is listed: a re-judging's structural checks are the run's own and are left
out of its table.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from evals.record.assessment import AssessedCase, Assessment
from evals.record.results import CaseResult, CheckResult, Status, said
from evals.record.run import RunRecord

VERDICTS = ("pass", "fail")
NONE = "—"  # a check on one side only


@dataclass(frozen=True)
class CheckBeside:
    """One check as the run recorded it and as the assessment gave it."""

    id: str
    repetition: int
    attempt: int
    kind: str
    recorded: CheckResult | None
    assessed: CheckResult | None

    @property
    def before(self) -> str:
        return said(self.recorded) if self.recorded is not None else NONE

    @property
    def after(self) -> str:
        return said(self.assessed) if self.assessed is not None else NONE

    @property
    def differs(self) -> bool:
        """Both gave a verdict (pass or fail) and not the same one."""
        return self.before in VERDICTS and self.after in VERDICTS and self.before != self.after


@dataclass(frozen=True)
class Beside:
    """An assessment read beside its run."""

    assessment: Assessment
    checks: list[CheckBeside]
    moved: list[tuple[str, int, Status, Status]]  # (item, repetition, recorded, assessed)
    not_in_run: list[str]  # "id #rep" an assessment holds that the run record does not

    @property
    def agree(self) -> int:
        return sum(c.before in VERDICTS and c.before == c.after for c in self.checks)

    @property
    def disagree(self) -> int:
        return sum(c.differs for c in self.checks)


def beside(record: RunRecord, assessment: Assessment) -> Beside:
    """`assessment` paired with `record`, the run it was made of."""
    if assessment.run_id != record.run_id:
        raise ValueError(f"assessment {assessment.id} is of run {assessment.run_id},"
                         f" not of run {record.run_id}")
    stored = {(c.id, c.repetition): c for c in record.cases}
    checks: list[CheckBeside] = []
    moved: list[tuple[str, int, Status, Status]] = []
    missing: list[str] = []
    for case in assessment.cases:
        original = stored.get((case.id, case.repetition))
        if original is None:
            missing.append(f"{case.id} #{case.repetition}")
            continue
        checks += (_by_place(original, case) if assessment.kind == "rejudge"
                   else _paired(original, case))
        if case.status != original.status:
            moved.append((case.id, case.repetition, original.status, case.status))
    return Beside(assessment, checks, moved, missing)


def _by_place(original: CaseResult, case: AssessedCase) -> list[CheckBeside]:
    """A re-judging's checks beside the run's checks at their places."""
    out = []
    for c in sorted(case.checks, key=lambda c: (c.attempt, c.check)):
        checks = original.attempts[c.attempt - 1].checks \
            if c.attempt <= len(original.attempts) else []
        recorded = checks[c.check - 1] if c.check <= len(checks) else None
        out.append(CheckBeside(case.id, case.repetition, c.attempt, c.result.kind, recorded,
                               c.result))
    return out


def _paired(original: CaseResult, case: AssessedCase) -> list[CheckBeside]:
    """A rescore's checks beside the run's, attempt by attempt and kind by kind, with a
    recorded check the rescore lacks (a check no longer run) against a dash."""
    out: list[CheckBeside] = []
    attempts = sorted({c.attempt for c in case.checks} | set(range(1, len(original.attempts) + 1)))
    for n in attempts:
        recorded = original.attempts[n - 1].checks if n <= len(original.attempts) else []
        left = _by_kind(recorded)
        for c in sorted(case.checks, key=lambda c: c.check):
            if c.attempt != n:
                continue
            same = left.get(c.result.kind)
            out.append(CheckBeside(case.id, case.repetition, n, c.result.kind,
                                   same.pop(0) if same else None, c.result))
        out += [CheckBeside(case.id, case.repetition, n, kind, c, None)
                for kind, rest in left.items() for c in rest]
    return out


def _by_kind(checks: Sequence[CheckResult]) -> dict[str, list[CheckResult]]:
    kinds: dict[str, list[CheckResult]] = {}
    for c in checks:
        kinds.setdefault(c.kind, []).append(c)
    return kinds


def who(assessment: Assessment) -> str:
    """What made it: the checks of a harness (a rescore), or a judge and whether it decides."""
    judge = assessment.judge
    if judge is None:
        return f"today's checks (harness {assessment.harness[:12]})"
    return f"judge {judge.named()}: {judge.role()}"


def summary(b: Beside) -> str:
    """One line: how many checks, how many agree and differ, how many statuses moved."""
    counts = Counter(c.after for c in b.checks if c.assessed is not None)
    gave = ", ".join(f"{counts[k]} {k}" for k in ("pass", "fail", "not asked", "error", "none")
                     if counts[k]) or "nothing"
    cases = len(b.assessment.cases)
    return (f"{cases} stored result(s); {len(b.checks)} check(s) beside the run's: {gave};"
            f" {b.agree} agree, {b.disagree} differ; {len(b.moved)} status(es) changed")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _row(c: CheckBeside) -> str:
    mark = ' class="check failed"' if c.differs else ""
    reasons = "".join(
        f"<div><strong>{label}:</strong> {_e(check.reason)}</div>"
        for label, check in (("recorded", c.recorded), ("assessed", c.assessed))
        if check is not None and c.differs)
    return (f'<tr{mark}><td class="id">{_e(c.id)}</td><td>{c.repetition}</td>'
            f"<td>{c.attempt}</td><td>{_e(c.kind)}</td><td>{_e(c.before)}</td>"
            f"<td>{_e(c.after)}</td><td>{reasons}</td></tr>")


def assessment_html(b: Beside) -> str:
    """One assessment beside its run, as a collapsed panel (open when it moved a status)."""
    a = b.assessment
    moved = "".join(f'<li><span class="id">{_e(cid)}</span> #{rep}: <span class="{was}">'
                    f'{was}</span> → <span class="{now}">{now}</span></li>'
                    for cid, rep, was, now in b.moved)
    left = "".join(f"<li>{_e(x.id)} #{x.repetition}: {_e(x.reason)}</li>" for x in a.left_out)
    lost = "".join(f"<li>{_e(x)}: not in this run's record</li>" for x in b.not_in_run)
    rows = "".join(_row(c) for c in sorted(b.checks, key=lambda c: (not c.differs, c.id,
                                                                      c.repetition, c.attempt)))
    table = ('<table class="grid"><tr><th>item</th><th>rep.</th><th>att.</th><th>check</th>'
             f"<th>recorded</th><th>assessed</th><th>why they differ</th></tr>{rows}</table>"
             if rows else "<p>No check beside the run's.</p>")
    opened = " open" if b.moved else ""
    return (f'<details class="item" id="assessment-{_e(a.id)}"{opened}><summary>'
            f'<span class="badge">{_e(a.kind)}</span><span class="id">{_e(a.id)}</span>'
            f'<span class="file">{_e(a.created[:19].replace("T", " "))} · {_e(who(a))}</span>'
            f'</summary><div class="body"><p>{_e(summary(b))}</p>'
            + (f"<h3>Statuses under it</h3><ul>{moved}</ul>" if moved else "")
            + table
            + (f"<h3>Left out</h3><ul>{left}{lost}</ul>" if left or lost else "")
            + "</div></details>")


def assessments_html(record: RunRecord, assessments: Sequence[Assessment]) -> str:
    """Every assessment of a run beside its results, oldest first; nothing when it has none.
    The run's own statuses above stay as stored."""
    if not assessments:
        return ""
    return (f'<h2 id="assessments">Assessments beside this run ({len(assessments)})</h2>'
            "<p>Rescores and re-judgings of its recorded answers, stored apart: the statuses"
            " above are the run's own, as stored.</p>"
            + "".join(assessment_html(beside(record, a)) for a in assessments))


__all__ = ["Beside", "CheckBeside", "assessment_html", "assessments_html", "beside", "summary",
           "who"]
