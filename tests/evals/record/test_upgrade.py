"""Runs written by older harnesses, read through the one reader: a version-2 record typed to
the leaves, a version-1 artifact, and a version-2 selection string made a typed selection."""

import json

from evals.record.artifact import read_record
from evals.record.transcript import ToolCall
from tests.evals.record.helpers import v2_data


def test_a_version_2_record_is_typed_to_the_leaves_once_read():
    data = v2_data()
    record = read_record(data, "v2")
    assert record.models.chat == "openai/fake" == data["models"]["chat"]
    assert record.models.judge == data["judge_model"]
    assert record.settings.order == data["settings"]["order"]
    attempts = [a for c in record.cases for a in c.attempts]
    calls = [c for a in attempts for c in a.tool_calls]
    assert calls and all(isinstance(c, ToolCall) for c in calls)
    judged = [k for a in attempts for k in a.checks if k.judge]
    assert judged and all(k.judge.verdict in ("pass", "fail", None) for k in judged)
    assert any(a.usage.visitor_tokens for a in attempts)
    again = read_record(json.loads(record.model_dump_json()), "again")
    assert again == record  # version 3 reads back as itself


def test_a_version_1_artifact_is_read_too():
    v2 = v2_data()
    case = next(c for c in v2["cases"] if c["attempts"] and c["attempts"][0]["tool_calls"])
    v1_case = {k: case[k] for k in ("id", "file", "prompt", "status", "skipped_reason")}
    v1_case["attempts"] = [{k: a[k] for k in ("answer", "tool_calls", "qr_hints",
                                              "attached_manuals", "evidence", "latency_ms",
                                              "usage", "error")}
                           | {"checks": [{k: c[k] for k in ("kind", "passed", "reason", "error",
                                                            "judge")} for c in a["checks"]]}
                           for a in case["attempts"]]
    # As 74cc664^'s write_artifact wrote it: no version, loose keys at the top.
    v1 = {"started": v2["started"], "ended": v2["ended"],
          "models": {"chat": "openai/fake", "judge": "openai/fake"},
          "judge_model": "openai/fake", "concurrency": 4, "selection": "no-glowforge,x",
          "totals": v2["totals"], "cases": [v1_case]}
    record = read_record(v1, "v1")
    assert record.settings.concurrency == 4 and record.models.judge == "openai/fake"
    [result] = record.cases
    assert result.id == case["id"] and result.repetition == 1
    assert result.attempts[0].answer == case["attempts"][0]["answer"]
    assert [c.name for c in result.attempts[0].tool_calls] == [
        c["name"] for c in case["attempts"][0]["tool_calls"]]


def test_a_version_2_selection_string_becomes_a_typed_selection():
    data = v2_data()
    data["plan"]["selection"] = "file=x.yaml; cases=a,b; groups=g; only=cases; styles=full"
    selection = read_record(data, "v2").plan.selection
    assert selection.file == "x.yaml" and selection.names == ("a", "b")
    assert selection.groups == ("g",) and selection.only == "cases" and selection.full


def test_records_from_before_auto_repetitions_and_reruns_read_as_fixed_and_unlinked():
    from evals.record.repetitions import RepeatRule

    record = read_record(v2_data(), "v2")
    assert record.plan.repeat_rule is None and record.plan.repeats == f"{record.plan.repeat} fixed"
    assert record.settings.rerun_of is None
    # a version-3 record written before the fields existed has neither key
    data = json.loads(record.model_dump_json())
    del data["plan"]["repeat_rule"], data["settings"]["rerun_of"]
    assert read_record(data, "v3") == record
    # and one with them reads them back
    newer = record.model_copy(update={
        "plan": record.plan.model_copy(update={"repeat_rule": RepeatRule(max=5), "repeat": 5}),
        "settings": record.settings.model_copy(update={"rerun_of": "r1"})})
    assert read_record(json.loads(newer.model_dump_json()), "v3") == newer
