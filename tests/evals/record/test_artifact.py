import gzip
import io
import json
from pathlib import Path

import pytest

from evals.record.artifact import ArtifactError, read_record, read_run, write_atomically, write_run
from evals.record.results import Attempt, CaseResult, CheckResult, Totals
from evals.record.run import ARTIFACT_VERSION, Models, RunRecord
from evals.record.transcript import ToolCall, Transcript
from evals.report.console import conversation_lines, cut_lines, print_report
from evals.report.html import render_run
from evals.report.junit import junit_xml
from evals.report.stats import stats_lines

DATA = Path(__file__).parent / "data"


def v2_data() -> dict:
    return json.loads(gzip.decompress((DATA / "v2-run.json.gz").read_bytes()))


def test_a_version_2_artifact_gives_the_same_report_page_and_xml_as_before(tmp_path):
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(v2_data()))
    record = read_run(path)
    assert record.version == ARTIFACT_VERSION and len(record.cases) == 76
    out = io.StringIO()
    print_report(record.cases, out, trusted_by_flag=record.judge_trusted_by_flag)
    for line in [*stats_lines(record.cases), *conversation_lines(record.cases),
                 *cut_lines(record.cases)]:
        print(line, file=out)
    assert out.getvalue() == (DATA / "v2-run.console.txt").read_text()
    assert render_run(record) == gzip.decompress(
        (DATA / "v2-run.html.gz").read_bytes()).decode()
    assert junit_xml(record) == gzip.decompress(
        (DATA / "v2-run.junit.xml.gz").read_bytes()).decode()


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


def test_the_artifact_is_written_redacted_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    check = CheckResult(kind="mentions_tool {'value': 'Trotec'}", passed=True, reason="names")
    result = CaseResult(id="a", file="f.yaml", prompt="p", status="PASS", attempts=[
        Attempt(transcript=Transcript(answer="the key is sk-very-secret-value"),
                checks=[check])])
    record = RunRecord(models=Models(chat="scripted/fake"), totals=Totals.of([result]),
                       cases=[result])
    path = write_run(record, tmp_path / "run.json")
    text = path.read_text()
    assert "sk-very-secret-value" not in text and "[redacted]" in text
    data = json.loads(text)
    assert data["version"] == 3 and data["totals"]["passed"] == 1
    assert data["cases"][0]["attempts"][0]["transcript"]["answer"] == "the key is [redacted]"
    assert read_run(path).cases[0].attempts[0].checks == [check]


def test_a_broken_artifact_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.json"
    with pytest.raises(ArtifactError, match="cannot read the run artifact"):
        read_run(bad)
    bad.write_text("{")
    with pytest.raises(ArtifactError, match="not JSON"):
        read_run(bad)
    bad.write_text("[]")
    with pytest.raises(ArtifactError, match="a run artifact is a JSON object"):
        read_run(bad)
    bad.write_text('{"cases": [{"id": "x", "file": "f.yaml", "status": "PASS"}]}')
    with pytest.raises(ArtifactError, match=r"field cases\.0\.prompt: Field required"):
        read_run(bad)
    bad.write_text('{"version": 99, "cases": []}')
    with pytest.raises(ArtifactError, match="artifact version 99; this harness reads 1, 2, 3"):
        read_run(bad)
    bad.write_text('{"version": 3, "settings": {"colour": "red"}}')
    with pytest.raises(ArtifactError, match=r"field settings\.colour: Extra inputs"):
        read_run(bad)


def test_an_artifact_written_to_a_device_or_pipe_is_written_not_replaced(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_atomically(fifo, '{"status": "running"}')
    reader.join(timeout=5)
    assert got == ['{"status": "running"}'] and fifo.is_fifo()  # still a pipe
    plain = tmp_path / "run.json"
    write_atomically(plain, "one")
    write_atomically(plain, "two")
    assert plain.read_text() == "two" and not list(tmp_path.glob(".*.tmp"))
