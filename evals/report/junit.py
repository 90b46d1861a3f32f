"""JUnit XML for CI systems: one test case per eval case (its repetitions together)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from app.redact import redact
from evals.record.artifact import write_atomically
from evals.record.results import CaseResult
from evals.record.run import RunRecord

_FAILING = ("FAIL", "ERROR", "UNDECIDED")


def junit_xml(record: RunRecord) -> str:
    """FLAKY is a pass with a property flaky=true; SKIPPED is skipped; FAIL, ERROR and
    UNDECIDED are failures (an ERROR as <error>) with the reasons of their checks."""
    by_case: dict[str, list[CaseResult]] = defaultdict(list)
    for r in record.cases:
        by_case[r.id].append(r)
    suite = ET.Element("testsuite", name="makerlab-evals", tests=str(len(by_case)))
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    for cid, reps in by_case.items():
        reps.sort(key=lambda r: r.repetition)
        case = ET.SubElement(suite, "testcase", classname=reps[0].file.removesuffix(".yaml"),
                             name=cid)
        time_s = sum(a.latency_ms for r in reps for a in r.attempts) / 1000
        case.set("time", f"{time_s:.3f}")
        statuses = [r.status for r in reps]
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="statuses", value=" ".join(statuses))
        if "FLAKY" in statuses:
            ET.SubElement(props, "property", name="flaky", value="true")
        bad = [r for r in reps if r.status in _FAILING]
        if bad:
            first = bad[0]
            reasons = [f"{c.kind}: {c.reason}" for a in first.attempts for c in a.checks
                       if not c.passed or not c.decided]
            reasons += [f"error: {a.error}" for a in first.attempts if a.error]
            tag = "error" if first.status == "ERROR" else "failure"
            counts["errors" if tag == "error" else "failures"] += 1
            el = ET.SubElement(case, tag, message=f"{first.status} (repetition"
                                                  f" {first.repetition})")
            el.text = redact("\n".join(reasons))
        elif all(s == "SKIPPED" for s in statuses):
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=reps[0].skipped_reason or "skipped")
    for k, v in counts.items():
        suite.set(k, str(v))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def write_junit(record: RunRecord, path: Path) -> Path:
    write_atomically(path, junit_xml(record))
    return path
