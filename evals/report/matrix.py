"""Many runs of one plan in one table: rows are items, columns are versions, and each column
paired with a baseline column.

A cell is an item's statuses over its repetitions and its pass rate over the decided ones
(PASS and FLAKY passed, FAIL did not; UNDECIDED, ERROR and SKIPPED are not decided, so a
cell of those alone has no rate). Per column: items per status, p50 and p95 latency over the
attempts that measured it (evals/report/spend.py), what its answers cost, made or replayed,
and the share of its model calls replayed from the call cache.

Each column is paired with the baseline exactly as `compare` pairs two runs
(evals/report/compare.py: per item, its first decided attempts; improved, regressed,
unchanged, uncertain), with McNemar's exact test on the discordant items. Testing k columns
against one baseline is k tests: a p-value below 0.05 somewhere among many columns is
likely by chance alone, so each column's p-value is also given with Holm's step-down
correction across the columns that have one, and the verdict reads the corrected one.
"""

from __future__ import annotations

from collections import Counter

from evals.checks.spend import attempt_cost
from evals.record.matrix import Cell, Column, Matrix, Row, Versus
from evals.record.results import CaseResult
from evals.record.run import RunRecord
from evals.report.compare import ALPHA
from evals.report.compare import compare_runs as pair_runs
from evals.report.spend import ran, side_spend

STATUSES = ("PASS", "FLAKY", "FAIL", "UNDECIDED", "ERROR", "SKIPPED")


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (Holm 1979) of the p-values given, in their order; None
    (no test: no discordant item) stays None and is not counted among the tests."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def cell(results: list[CaseResult]) -> Cell:
    ordered = sorted(results, key=lambda r: r.repetition)
    statuses = [r.status for r in ordered]
    passed = sum(s in ("PASS", "FLAKY") for s in statuses)
    return Cell(statuses=statuses, passed=passed, decided=passed + statuses.count("FAIL"))


def column(label: str, ref: str, record: RunRecord) -> Column:
    costs = [attempt_cost(a) for r in record.cases for a in r.attempts if ran(a)]
    counts = Counter[str](r.status for r in record.cases)
    return Column(label=label, ref=ref, run_id=record.run_id,
                  totals={s: counts.get(s, 0) for s in STATUSES},
                  spend=side_spend(record.cases),
                  cost_usd=None if None in costs else sum(c for c in costs if c is not None),
                  calls_made=sum(a.calls.made for r in record.cases for a in r.attempts),
                  calls_replayed=sum(a.calls.replayed for r in record.cases
                                     for a in r.attempts),
                  visitor_failed=sum(1 for r in record.cases
                                     if any(a.visitor_failed for a in r.attempts)))


def verdict(improved: int, regressed: int, p: float | None, p_holm: float | None,
            unchanged: int) -> str:
    if p is None or p_holm is None:
        if not unchanged:
            return "no item decided on both sides: nothing to compare"
        return (f"no discordant items: the same decided result as the baseline on the"
                f" {unchanged} item(s) decided on both sides")
    said = (f"McNemar p = {p:.3g}, Holm-adjusted p = {p_holm:.3g} on {improved + regressed}"
            f" discordant items ({improved} improved, {regressed} regressed)")
    if p_holm < ALPHA:
        return f"{said}: {'better' if improved > regressed else 'worse'} than the baseline," \
               " distinguishable from noise at this size"
    return f"{said}: not distinguishable from the baseline at this size"


def plan_differs(records: dict[str, RunRecord]) -> list[str]:
    """Why these runs cannot be one matrix (they ran different plans, or a different simulated
    visitor), in lines for a person; empty when they can."""
    labels = list(records)
    first = records[labels[0]]
    for label in labels[1:]:
        r = records[label]
        if r.plan is None or first.plan is None or r.plan.fingerprint != first.plan.fingerprint:
            changes = r.plan.changes_since(first.plan) if r.plan and first.plan else \
                ["(a run has no plan)"]
            return [f"runs {labels[0]} and {label} ran different plans; a changed plan is"
                    " never a difference between versions:", *(f"  {c}" for c in changes)]
        if r.models.visitor != first.models.visitor:
            return [f"runs {labels[0]} and {label} ran different plans:",
                    f"  simulated visitor's model changed: {first.models.visitor} ->"
                    f" {r.models.visitor}"]
    return []


def build(records: dict[str, RunRecord], refs: dict[str, str], baseline: str) -> Matrix:
    """The matrix of runs of one plan, keyed by column label in column order; `baseline` is
    one of the labels."""
    if baseline not in records:
        raise ValueError(f"the baseline {baseline!r} is not a column"
                         f" ({', '.join(records)})")
    rows: dict[str, Row] = {}
    for label, record in records.items():
        by_item: dict[str, list[CaseResult]] = {}
        for r in record.cases:
            by_item.setdefault(r.id, []).append(r)
        for cid, results in by_item.items():
            row = rows.setdefault(cid, Row(id=cid, file=results[0].file,
                                           group=results[0].group, cells={}))
            row.cells[label] = cell(results)
    others = [label for label in records if label != baseline]
    paired = [pair_runs(records[baseline], records[label]) for label in others]
    adjusted = holm([c.p_value for c in paired])
    versus = []
    for label, c, p_holm in zip(others, paired, adjusted, strict=True):
        improved = sorted(cid for cid, o in c.cases.items() if o == "improved")
        regressed = sorted(cid for cid, o in c.cases.items() if o == "regressed")
        versus.append(Versus(label=label, counts=c.counts, improved=improved,
                             regressed=regressed, p_value=c.p_value, p_holm=p_holm,
                             verdict=verdict(len(improved), len(regressed), c.p_value,
                                             p_holm, c.counts["unchanged"])))
    first = records[baseline]
    return Matrix(plan_fingerprint=first.plan.fingerprint if first.plan else None,
                  baseline=baseline,
                  columns=[column(label, refs.get(label, label), r)
                           for label, r in records.items()],
                  rows=list(rows.values()), versus=versus)


def cell_text(c: Cell | None) -> str:
    """A cell in a few characters: the status, or with repetitions the passed share ("2/3",
    "—/3" when none was decided)."""
    if c is None:
        return "—"
    if len(c.statuses) == 1:
        return c.statuses[0]
    return f"{c.passed}/{len(c.statuses)}" if c.decided else f"—/{len(c.statuses)}"


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}s"


def share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def calls(c: Column) -> str:
    """The column's replayed share; the call cache counts the calls, so with it off none is
    counted and the share is not known."""
    counted = c.calls_made + c.calls_replayed
    if not counted:
        return "replayed: not known (no call counted; the call cache was off)"
    return f"replayed {share(c.replayed_share)} of {counted} calls"


def render(m: Matrix) -> str:
    """The matrix for a terminal: one line per item, then the columns' figures and each
    column against the baseline."""
    labels = m.labels
    width = max([len(r.id) for r in m.rows] + [4])
    cols = [max(len(label), 9) for label in labels]
    lines = ["  ".join([f"{'item':<{width}}", *(f"{label:<{w}}"
                                                   for label, w in zip(labels, cols,
                                                                       strict=True))])]
    for row in m.rows:
        lines.append("  ".join([f"{row.id:<{width}}",
                                *(f"{cell_text(row.cells.get(label)):<{w}}"
                                  for label, w in zip(labels, cols, strict=True))]))
    lines.append("")
    for c in m.columns:
        t = c.totals
        base = " (baseline)" if c.label == m.baseline else ""
        lines.append(f"{c.label}{base}: {c.ref} · run {c.run_id or 'not stored'}")
        lines.append(f"  {t['PASS']} passed · {t['FLAKY']} flaky · {t['FAIL']} failed ·"
                     f" {t['UNDECIDED']} undecided · {t['ERROR']} errored ·"
                     f" {t['SKIPPED']} skipped · p50 {seconds(c.spend.p50_s)} · p95"
                     f" {seconds(c.spend.p95_s)} · cost {money(c.cost_usd)} · {calls(c)}"
                     + (f" · the simulated visitor failed in {c.visitor_failed} (undecided,"
                        " not counted against the agent)" if c.visitor_failed else ""))
    lines.append("")
    for v in m.versus:
        n = v.counts
        lines.append(f"{v.label} vs {m.baseline}: {n['improved']} improved ·"
                     f" {n['regressed']} regressed · {n['unchanged']} unchanged ·"
                     f" {n['uncertain']} uncertain — {v.verdict}")
        lines += [f"  regressed: {', '.join(v.regressed)}"] if v.regressed else []
    return "\n".join(lines)
