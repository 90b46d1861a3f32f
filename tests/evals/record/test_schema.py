"""The run record's JSON Schema: a valid 2020-12 schema that accepts a run as `write_run` writes
it (a version-2 artifact upgraded, and a new one) and refuses what no reader would read."""

import json

import jsonschema

from evals.record.artifact import read_record, write_run
from evals.record.results import Attempt, CaseResult, CheckResult, Totals
from evals.record.run import Models, RunRecord
from evals.record.schema import RUN_RECORD
from evals.record.transcript import Transcript
from tests.evals.record.helpers import v2_data


def validator() -> jsonschema.Draft202012Validator:
    schema = RUN_RECORD.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def written(record: RunRecord, tmp_path) -> dict:
    return json.loads(write_run(record, tmp_path / "run.json").read_text())


def test_a_run_as_written_is_valid(tmp_path):
    upgraded = written(read_record(v2_data(), "v2"), tmp_path)
    assert len(upgraded["cases"]) == 76
    errors = list(validator().iter_errors(upgraded))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    result = CaseResult(id="a", file="f.yaml", prompt="p", status="PASS", attempts=[
        Attempt(transcript=Transcript(answer="yes", messages=[{"role": "user"}]),
                checks=[CheckResult(kind="mentions_tool", passed=True, reason="names")])])
    new = written(RunRecord(models=Models(chat="scripted/fake"),
                            totals=Totals.of([result]), cases=[result]), tmp_path)
    assert validator().is_valid(new)


def test_what_no_reader_reads_is_refused(tmp_path):
    data = written(RunRecord(), tmp_path)
    check = validator()
    assert check.is_valid(data)
    assert not check.is_valid({**data, "version": 2})  # an older version: upgraded when read
    assert not check.is_valid({**data, "status": "paused"})
    assert not check.is_valid({**data, "colour": "blue"})
    assert not check.is_valid({**data, "cases": [{"id": "a"}]})
