"""The console report and the JSON artifact (evals/.last-run.json)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from evals.runner import CaseResult

ARTIFACT = Path(__file__).parent / ".last-run.json"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|DATABASE_URL)", re.IGNORECASE)
ANSWER_PREVIEW = 400


def totals(results: list[CaseResult]) -> dict[str, int]:
    counts = Counter(r.status for r in results)
    return {
        "cases": len(results),
        "passed": counts["PASS"],
        "flaky": counts["FLAKY"],
        "failed": counts["FAIL"],
        "errored": counts["ERROR"],
        "skipped": counts["SKIPPED"],
    }


def totals_line(results: list[CaseResult]) -> str:
    t = totals(results)
    return (f"{t['passed']}/{t['cases']} passed · {t['flaky']} flaky · {t['failed']} failed"
            f" · {t['errored']} errored · {t['skipped']} skipped")


def case_line(result: CaseResult) -> str:
    return f"  {result.status:<7} {result.id}"


def detail_block(result: CaseResult) -> str:
    lines = [f"{result.status}  {result.id}  ({result.file})", f"  prompt: {result.prompt}"]
    if result.status == "SKIPPED":
        lines.append(f"  skipped: {result.skipped_reason}")
        return "\n".join(lines)
    for n, attempt in enumerate(result.attempts, start=1):
        if len(result.attempts) > 1:
            lines.append(f"  attempt {n}:")
        if attempt.error:
            lines.append(f"  ! error: {attempt.error.splitlines()[0]}")
        for check in attempt.checks:
            if not check.passed:
                who = f" ({check.judge['model']})" if check.judge else ""
                lines.append(f"  x {check.kind}{who} — {check.reason}")
        if attempt.answer or not attempt.error:
            answer = " ".join(attempt.answer.split())
            if len(answer) > ANSWER_PREVIEW:
                answer = answer[:ANSWER_PREVIEW] + "…"
            lines.append(f"      answer: \"{answer}\"")
    return "\n".join(lines)


def print_report(results: list[CaseResult], out: TextIO) -> None:
    for r in results:
        print(case_line(r), file=out)
    for r in results:
        if r.status != "PASS":
            print("", file=out)
            print(detail_block(r), file=out)
    print("", file=out)
    print(totals_line(results), file=out)


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """Replace the value of every secret-looking environment variable, wherever it appears."""
    env = dict(os.environ) if env is None else env
    for name, value in env.items():
        if _SECRET_NAME.search(name) and len(value) >= 6:
            text = text.replace(value, "[redacted]")
    return text


def write_artifact(results: list[CaseResult], meta: dict[str, Any], path: Path = ARTIFACT
                   ) -> Path:
    """Write the run's JSON atomically (a reader never sees half a file)."""
    data = {**meta, "totals": totals(results), "cases": [r.to_dict() for r in results]}
    text = redact(json.dumps(data, indent=2, default=str, ensure_ascii=False))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path


def exit_code(results: list[CaseResult]) -> int:
    """0 only when nothing failed or errored (a flaky case does not fail the run)."""
    t = totals(results)
    return 1 if t["failed"] or t["errored"] else 0
