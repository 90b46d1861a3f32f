"""Reading runs written by older harnesses: versions 1 and 2 of the run record, as JSON, made
into version 3's shape (the artifact's and the run store's rows alike).

Version 1 (no `version` key) carried `concurrency` and `selection` at the top, and neither
repetitions nor groups. Version 2 stored an attempt's answer, tool calls and evidence beside its
checks, a judge's verdict as a loose mapping, usage as a mapping of whichever counts were not
zero, the chat model under three names (`models.chat`, `settings.chat_model`,
`settings.models.chat`), the judge as `judge_model` and the selection as a "key=value; …"
string. Version 3 keeps the attempt's transcript as its payload and every field typed.
"""

from __future__ import annotations

from typing import Any

from evals.record.run import ARTIFACT_VERSION

READABLE_VERSIONS = (1, 2, ARTIFACT_VERSION)

_TRANSCRIPT = ("answer", "tool_calls", "qr_hints", "attached_manuals", "evidence", "turns")
_CALL = ("name", "arguments", "result", "kind", "error", "outcome")
_JUDGE = ("model", "prompt_hash", "trust", "trusted_by_flag", "verdict", "pack", "question")
_SETTINGS = ("concurrency", "order", "version", "launch", "pid", "gate", "judge_pack",
             "judge_prompt_hash", "suite", "limit")


class UnreadableVersion(ValueError):
    """A record of a version this harness cannot read."""


def upgrade_run(data: dict[str, Any]) -> dict[str, Any]:
    """A run record (with or without its cases) in version 3's shape."""
    version = data.get("version", 1)
    if version == ARTIFACT_VERSION:
        # A stored run's header may be newer than rows an older harness stored under it.
        if "cases" in data:
            return {**data, "cases": [upgrade_case(c) for c in data["cases"]]}
        return data
    if version not in READABLE_VERSIONS:
        raise UnreadableVersion(f"artifact version {version}; this harness reads"
                                f" {', '.join(map(str, READABLE_VERSIONS))}")
    out = dict(data)
    settings = dict(out.pop("settings", None) or {})
    for loose in ("concurrency", "selection"):  # version 1 kept these at the top
        if loose in out:
            settings.setdefault(loose, out.pop(loose))
    found = settings.get("models")
    configured: dict[str, Any] = found if isinstance(found, dict) else {}
    models = dict(out.pop("models", None) or {})
    out["models"] = {
        "chat": models.get("chat") or settings.get("chat_model") or configured.get("chat"),
        "judge": out.pop("judge_model", None),
        "visitor": configured.get("sim_user"),
        "endpoint": models.get("endpoint"),
    }
    selection = settings.get("selection")
    new_settings = {k: settings[k] for k in _SETTINGS if k in settings}
    if "file" in settings:
        new_settings["suite_file"] = settings["file"]
    out["settings"] = new_settings
    if isinstance(out.get("plan"), dict):
        plan = dict(out["plan"])
        plan["selection"] = parse_selection(plan.get("selection") or selection)
        out["plan"] = plan
    if "cases" in out:
        out["cases"] = [upgrade_case(c) for c in out["cases"]]
    out["version"] = ARTIFACT_VERSION
    return out


def upgrade_point(data: dict[str, Any]) -> dict[str, Any]:
    """A stored comparison point in version 3's shape (its plan's selection typed)."""
    plan = data.get("plan")
    if isinstance(plan, dict) and not isinstance(plan.get("selection"), dict | None):
        return {**data, "plan": {**plan, "selection": parse_selection(plan["selection"])}}
    return data


def parse_selection(text: Any) -> dict[str, Any] | None:
    """Version 2's "file=…; cases=a,b; groups=g; only=cases; styles=full", or version 1's
    plain comma list of names, as a Selection's fields."""
    if not isinstance(text, str) or not text.strip():
        return None
    if "=" not in text:
        return {"names": [n.strip() for n in text.split(",") if n.strip()]}
    spec = dict(part.split("=", 1) for part in text.split("; ") if "=" in part)

    def names(key: str) -> list[str]:
        return [n.strip() for n in spec.get(key, "").split(",") if n.strip()]

    return {"file": spec.get("file"), "names": names("cases"), "groups": names("groups"),
            "only": spec.get("only"), "full": spec.get("styles") == "full"}


def upgrade_case(data: dict[str, Any]) -> dict[str, Any]:
    """One item's result (a run store row, or an artifact's case) in version 3's shape."""
    out = dict(data)
    out["attempts"] = [_attempt(a) for a in out.get("attempts", [])]
    return out


def _attempt(data: dict[str, Any]) -> dict[str, Any]:
    if "transcript" in data:
        return data
    out = {k: v for k, v in data.items() if k not in _TRANSCRIPT}
    transcript = {k: data[k] for k in _TRANSCRIPT if k in data and data[k] is not None}
    transcript["tool_calls"] = [{k: c[k] for k in _CALL if k in c}
                                for c in transcript.get("tool_calls", [])]
    out["transcript"] = transcript
    out["checks"] = [_check(c) for c in data.get("checks", [])]
    return out


def _check(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    judge = out.get("judge")
    if isinstance(judge, dict):
        kept = {k: judge[k] for k in _JUDGE if k in judge}
        kept.setdefault("trust", "")
        kept.setdefault("prompt_hash", "")  # unknown: calibrate --save refuses it
        out["judge"] = kept
    return out
