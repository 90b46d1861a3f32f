import gzip
import io
import json

import pytest

from evals.record.artifact import ArtifactError, read_run, write_atomically, write_run
from evals.record.results import Attempt, CaseResult, CheckResult, Totals
from evals.record.run import ARTIFACT_VERSION, Models, RunRecord
from evals.record.transcript import Transcript
from evals.report.console import conversation_lines, cut_lines, print_report
from evals.report.html import render_run
from evals.report.junit import junit_xml
from evals.report.stats import stats_lines
from tests.evals.record.helpers import DATA, v2_data


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


def test_a_run_under_way_keeps_each_case_added_and_is_rewritten_whole_with_them(
        tmp_path, monkeypatch):
    from evals.record.artifact import RunArtifact

    path = tmp_path / "run.json"
    key = "sk-very-secret-value"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    record = RunRecord(run_id="r1", status="running", started="2026-12-01T00:00:00+00:00",
                       models=Models(chat="openai/fake"))
    artifact = RunArtifact(record, path)
    artifact.write()
    assert read_run(path).cases == []
    first = CaseResult(id="a", file="f.yaml", prompt="p", status="PASS",
                       attempts=[Attempt(transcript=Transcript(answer=f"key {key}"))])
    artifact.add(first)
    artifact.add(CaseResult(id="b", file="f.yaml", prompt="p", status="FAIL"))
    assert artifact.behind and read_run(path).cases == []  # kept, not written yet
    artifact.write()
    assert not artifact.behind
    got = read_run(path)
    assert got.status == "running" and got.run_id == "r1"
    assert [c.id for c in got.cases] == ["a", "b"]
    assert key not in path.read_text() and "[redacted]" in path.read_text()
    assert not list(tmp_path.glob(".*.tmp"))  # renamed over, never left half-written
    assert (got.totals.cases, got.totals.passed, got.totals.failed) == (2, 1, 1)


def test_two_writers_of_one_artifact_never_leave_it_torn(tmp_path):
    import threading

    path = tmp_path / "run.json"
    errors, torn = [], []

    def write(n):
        for i in range(150):
            try:
                write_atomically(path, json.dumps({"writer": n, "i": i, "pad": "x" * 4000}))
            except OSError as exc:
                errors.append(exc)
            try:
                json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                torn.append(i)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and torn == []
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_rewritten_artifact_keeps_its_mode(tmp_path):
    path = tmp_path / "run.json"
    write_atomically(path, "{}")
    assert path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o640)
    write_atomically(path, "{}")
    assert path.stat().st_mode & 0o777 == 0o640


def test_pieces_of_a_key_in_a_check_s_and_a_judge_s_reason_are_not_in_the_artifact(
        tmp_path, monkeypatch):
    from evals.checks import authored
    from evals.fixtures.catalog import fixtures_for

    key = "tok-_Xa9fB2kLmQ7rT4vW_-yZ3cD8eF"
    monkeypatch.setenv("SERVICE_TOKEN", key)
    answer = f"Your token is {key} and the Trotec cuts it."
    spec = authored()["mentions_tool"]
    assert spec.check is not None
    # The check quotes the answer as its markup reads: the key's underscores dropped.
    passed, reason = spec.check(Transcript(answer=answer),
                                spec.args.model_validate({"value": "Form 4"}),
                                fixtures_for("demo"))
    assert not passed and "Xa9fB2kLmQ7rT4vW-yZ3cD8eF" in reason
    judged = CheckResult(kind="judge", passed=False,
                         reason=f"It reads out the token {key[5:20]} to the visitor.")
    result = CaseResult(id="a", file="f.yaml", prompt="p", status="FAIL", attempts=[
        Attempt(transcript=Transcript(answer=answer),
                checks=[CheckResult(kind="mentions_tool", passed=False, reason=reason),
                        judged])])
    record = RunRecord(models=Models(chat="scripted/fake"), totals=Totals.of([result]),
                       cases=[result])
    text = write_run(record, tmp_path / "run.json").read_text()
    for piece in ("Xa9fB2kLmQ7rT4vW", "yZ3cD8eF", key[5:20]):
        assert piece not in text, piece
    checks = read_run(tmp_path / "run.json").cases[0].attempts[0].checks
    assert [c.reason for c in checks] == [
        "does not name Form 4: “Your token is [redacted] and the Trotec cuts it.”",
        "It reads out the token [redacted] to the visitor."]
