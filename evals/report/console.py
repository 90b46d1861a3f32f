"""The console report and the JSON artifact (evals/.last-run.json)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from app.redact import redact
from evals.record.results import ARTIFACT_VERSION, CaseResult, RunRecord
from evals.settings import EVALS_DIR

ARTIFACT = EVALS_DIR / ".last-run.json"
ANSWER_PREVIEW = 400


def totals(results: list[CaseResult]) -> dict[str, int]:
    counts = Counter(r.status for r in results)
    return {
        "cases": len(results),
        "passed": counts["PASS"],
        "flaky": counts["FLAKY"],
        "failed": counts["FAIL"],
        "undecided": counts["UNDECIDED"],
        "errored": counts["ERROR"],
        "skipped": counts["SKIPPED"],
    }


def totals_line(results: list[CaseResult]) -> str:
    t = totals(results)
    return (f"{t['passed']}/{t['cases']} passed · {t['flaky']} flaky · {t['failed']} failed"
            f" · {t['undecided']} undecided · {t['errored']} errored · {t['skipped']} skipped")


def skip_lines(results: list[CaseResult]) -> list[str]:
    """One line per reason a case was skipped, with how many: a skip is never silent."""
    reasons = Counter(r.skipped_reason or "no reason given" for r in results
                      if r.status == "SKIPPED")
    return [f"  skipped {n}: {reason}" for reason, n in reasons.most_common()]


def case_line(result: CaseResult) -> str:
    """One line a case; a scenario conversation (id@style) also says how many visitor turns
    it ran."""
    line = f"  {result.status:<9} {result.id}"
    turns = result.attempts[0].turns if result.attempts else []
    if turns:
        line += f"  ({sum(1 for t in turns if t['role'] == 'user')} visitor turns)"
    return line


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
            who = f" ({check.judge['model']})" if check.judge else ""
            if not check.decided:
                verdict = check.judge.get("verdict") if check.judge else None
                lines.append(f"  ? {check.kind}{who} undecided, advisory verdict {verdict}:"
                             f" {check.reason}")
                if check.judge:
                    lines.append(f"      the judge is not trusted: {check.judge.get('trust')}")
            elif not check.passed:
                lines.append(f"  x {check.kind}{who} — {check.reason}")
            elif check.judge and check.judge.get("trusted_by_flag"):
                lines.append(f"  ✓ {check.kind}{who} passed on --trust-judge, not on"
                             " calibration")
        if attempt.answer or not attempt.error:
            answer = " ".join(attempt.answer.split())
            if len(answer) > ANSWER_PREVIEW:
                answer = answer[:ANSWER_PREVIEW] + "…"
            lines.append(f"      answer: \"{answer}\"")
    return "\n".join(lines)


def print_report(results: list[CaseResult], out: TextIO, *, trusted_by_flag: bool = False
                 ) -> None:
    """The console report, redacted like the artifact."""
    lines = [case_line(r) for r in results]
    for r in results:
        if r.status != "PASS":
            lines += ["", detail_block(r)]
    lines += ["", totals_line(results), *skip_lines(results)]
    if trusted_by_flag:
        lines.append("  judge: --trust-judge: judged verdicts decide cases although the judge"
                     " has not earned it by calibration")
    print(redact("\n".join(lines)), file=out)


def write_artifact(results: list[CaseResult], meta: dict[str, Any], path: Path = ARTIFACT
                   ) -> Path:
    """Write the run's JSON atomically (a reader never sees half a file)."""
    record = RunRecord(version=ARTIFACT_VERSION, **meta, totals=totals(results),
                         cases=results)
    return write_record(record, path)


def write_record(record: RunRecord, path: Path = ARTIFACT) -> Path:
    """Write a run record as the JSON artifact, redacted; atomically (a temporary file
    renamed over it) when it is a regular file, as it is; a device such as /dev/null is
    written to, never replaced."""
    text = redact(json.dumps(record.model_dump(mode="json"), indent=2, default=str,
                             ensure_ascii=False))
    write_atomically(path, text)
    return path


def write_atomically(path: Path, text: str) -> None:
    """Replace a regular file (or create one) so that a reader never sees half of it; write
    anything else (a device, a pipe) in place."""
    if path.exists() and not path.is_file():
        with path.open("w") as out:
            out.write(text)
        return
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def exit_code(results: list[CaseResult], *, fail_on_skip: bool = False) -> int:
    """0 only when nothing failed, errored or stayed undecided (a flaky case does not fail the
    run); with fail_on_skip, a skipped case fails it too."""
    t = totals(results)
    if t["failed"] or t["errored"] or t["undecided"]:
        return 1
    return 1 if fail_on_skip and t["skipped"] else 0


def conversation_lines(results: list[CaseResult]) -> list[str]:
    """What the scenario conversations took: visitor turns, the assistant's tokens, time, and
    what cloning a database for each cost."""
    runs = [a for r in results for a in r.attempts[:1] if a.turns or "database_clone_ms" in
            a.timings]
    if not runs:
        return []
    turns = [sum(1 for t in a.turns if t["role"] == "user") for a in runs]
    tokens = [a.usage.get("prompt_tokens", 0) + a.usage.get("completion_tokens", 0)
              for a in runs]
    clones = sorted(a.timings["database_clone_ms"] for a in runs
                    if "database_clone_ms" in a.timings)
    seconds = [a.latency_ms / 1000 for a in runs]
    visitor = sum(a.usage.get("visitor_tokens", 0) for a in runs)
    line = (f"conversations: {len(runs)} · visitor turns {sum(turns)} (mean"
            f" {sum(turns) / len(runs):.1f}, max {max(turns)}) · assistant tokens {sum(tokens):,}"
            f" · visitor tokens {visitor:,}"
            f" · {sum(seconds):.0f} s in conversation (mean {sum(seconds) / len(runs):.0f} s)")
    if clones:
        line += (f" · database clone median {clones[len(clones) // 2]} ms, max {clones[-1]}"
                 " ms")
    return [line]
