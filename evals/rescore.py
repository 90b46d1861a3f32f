"""Re-score a run from its artifact: the current structural checks on the recorded answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.manuals.citations import DocumentEvidence
from evals.cases import Case, CaseFileError
from evals.record import RecordedTurn
from evals.runner import Attempt, CaseResult, CheckResult, classify, run_checks


def _evidence(raw: dict[str, Any]) -> dict[str, DocumentEvidence]:
    out = {}
    for doc, ev in raw.items():
        texts = {int(k): v for k, v in (ev.get("page_texts") or {}).items()}
        out[doc] = DocumentEvidence(ev["status"], ev["content_type"], ev["is_pdf"],
                                    ev["page_count"], texts, ev.get("error"))
    return out


def load_artifact(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CaseFileError([f"{path}: cannot read the run artifact: {exc}"]) from exc
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise CaseFileError([f"{path}: not a run artifact (no 'cases' list)"])
    return data


def rescore(artifact: dict[str, Any], cases: list[Case]) -> list[CaseResult]:
    """No model call: each recorded attempt is checked again with today's case files."""
    by_id = {c.id: c for c in cases}
    results = []
    for recorded in artifact["cases"]:
        case = by_id.get(recorded["id"])
        if case is None:
            results.append(CaseResult(recorded["id"], recorded["file"], recorded["prompt"],
                                      "SKIPPED", [], "no longer in the case files"))
            continue
        if recorded["status"] == "SKIPPED" or not recorded["attempts"]:
            results.append(CaseResult(case.id, case.file, case.prompt, "SKIPPED", [],
                                      recorded.get("skipped_reason") or "not run"))
            continue
        attempts = []
        for a in recorded["attempts"]:
            if a.get("error") and not a.get("answer"):
                attempts.append(Attempt(error=a["error"]))
                continue
            turn = RecordedTurn(a["answer"], a["tool_calls"], a.get("attached_manuals", []),
                                a.get("qr_hints", []), _evidence(a.get("evidence", {})))
            # Judged verdicts need a model call: the recorded ones are carried over as they are.
            judged = [CheckResult(**c) for c in a.get("checks", []) if c.get("judge")]
            attempts.append(Attempt(
                answer=a["answer"], tool_calls=a["tool_calls"],
                checks=run_checks(case, turn) + judged,
                qr_hints=turn.qr_hints, attached_manuals=turn.attached_manuals,
                evidence=a.get("evidence", {}), latency_ms=a.get("latency_ms", 0),
                usage=a.get("usage", {}), error=a.get("error"),
            ))
        results.append(CaseResult(case.id, case.file, case.prompt, classify(attempts), attempts))
    return results
