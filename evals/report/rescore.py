"""Re-score a run from its artifact: the current structural checks on the recorded answers.

No model is called. Judged verdicts are carried over as they were recorded (judging again
takes a model call). A recorded case whose file no longer loads is an ERROR that names the
load error; a re-score that checks nothing is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.manuals.citations import DocumentEvidence
from evals.execute.runner import run_checks
from evals.load.cases import Case
from evals.record.results import (
    ARTIFACT_VERSION,
    Attempt,
    CaseResult,
    CheckResult,
    RunRecord,
    classify,
)
from evals.record.turn import RecordedTurn

READABLE_VERSIONS = (1, ARTIFACT_VERSION)  # 1: written before the artifact had a version


class ArtifactError(ValueError):
    """A run artifact that cannot be read; the message names the file and the field."""


def load_artifact(path: Path) -> RunRecord:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read the run artifact: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ArtifactError(f"{path}: a run artifact is a JSON object, not"
                            f" {type(data).__name__}")
    version = data.setdefault("version", 1)
    if version not in READABLE_VERSIONS:
        raise ArtifactError(f"{path}: artifact version {version}; this harness reads"
                            f" {', '.join(map(str, READABLE_VERSIONS))}")
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        raise ArtifactError(f"{path}: field {where}: {e['msg']}"
                            + (f" ({len(exc.errors())} errors)" if len(exc.errors()) > 1
                               else "")) from exc


def _evidence(raw: dict[str, Any]) -> dict[str, DocumentEvidence]:
    out = {}
    for doc, ev in raw.items():
        texts = {int(k): str(v) for k, v in (ev.get("page_texts") or {}).items()}
        out[doc] = DocumentEvidence(int(ev["status"]), str(ev["content_type"]),
                                    bool(ev["is_pdf"]), ev.get("page_count"), texts,
                                    ev.get("error"))
    return out


def rescore(artifact: RunRecord, cases: list[Case],
            load_errors: dict[str, list[str]] | None = None) -> list[CaseResult]:
    """Each recorded attempt checked again with today's case files."""
    by_id = {c.id: c for c in cases}
    load_errors = load_errors or {}
    results = []
    for recorded in artifact.cases:
        case = by_id.get(recorded.id)
        if case is None:
            broken = load_errors.get(Path(recorded.file).name)
            if broken:
                results.append(CaseResult(
                    id=recorded.id, file=recorded.file, prompt=recorded.prompt, status="ERROR",
                    repetition=recorded.repetition,
                    attempts=[Attempt(error=f"its case file no longer loads: {broken[0]}"
                                      + (f" (+{len(broken) - 1} more)" if len(broken) > 1
                                         else ""))]))
            else:
                results.append(CaseResult(id=recorded.id, file=recorded.file,
                                          prompt=recorded.prompt, status="SKIPPED",
                                          repetition=recorded.repetition,
                                          skipped_reason="no longer in the case files"))
            continue
        if recorded.status == "SKIPPED" or not recorded.attempts:
            results.append(CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                      status="SKIPPED", repetition=recorded.repetition,
                                      skipped_reason=recorded.skipped_reason or "not run"))
            continue
        attempts = []
        for a in recorded.attempts:
            if a.error and not a.answer:
                attempts.append(Attempt(error=a.error))
                continue
            turn = RecordedTurn(a.answer, a.tool_calls, a.attached_manuals, a.qr_hints,
                                _evidence(a.evidence))
            judged = [c for c in a.checks if c.judge]
            if case.judged and not judged:  # judged since the run: only a model call can judge
                judged = [CheckResult(kind="judge", passed=False, decided=False,
                                      reason="the case is judged now but was not when it ran;"
                                             " a rescore cannot judge it")]
            attempts.append(a.model_copy(update={"checks": run_checks(case, turn) + judged}))
        results.append(CaseResult(id=case.id, file=case.file, prompt=case.prompt,
                                  status=classify(attempts), attempts=attempts,
                                  repetition=recorded.repetition, group=case.group))
    return results


def checked_anything(results: list[CaseResult]) -> bool:
    return any(r.status not in ("SKIPPED", "ERROR") for r in results)
