"""The case and scenario files' JSON Schemas: every shipped file is valid against its own (read
as the loader reads it), a file the loader refuses for a wrong kind, argument or key is refused
by the schema too, and every shipped file names its schema on its first line."""

import tempfile
from pathlib import Path

import jsonschema
import pytest
import yaml
from jsonschema.exceptions import ValidationError

from evals.load.cases import case_errors, load_cases_by_file
from evals.load.schema import (
    CASE_FILE,
    CRITERIA_FILE,
    FILE_SCHEMAS,
    SCENARIO_FILE,
    file_schema,
    item_files,
    names_schema,
    schema_line,
    with_schema_line,
)
from evals.load.yamlfile import read_yaml
from evals.settings import CASES_DIR, SCENARIOS_DIR

CASE = {"id": "a-case", "prompt": "Do you have a laser cutter?",
        "assert": [{"kind": "no_unknown_tools"}]}
SCENARIO = {"id": "a-scenario", "visitor": {"who": "a student", "wants": "a laser cutter"},
            "criteria": [{"statement": "The assistant names the laser cutter."}]}


def case_errors_of(entries: list) -> list[str]:
    """The loader's errors for a case file of these entries."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.yaml"
        path.write_text(yaml.safe_dump(entries, sort_keys=False))
        return [e for lines in load_cases_by_file(path)[1].values() for e in lines]


def validator(schema: dict) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema)


def messages(error: ValidationError) -> list[str]:
    """Every message in an error and the errors under it (a union's alternatives)."""
    return [error.message, *(m for e in error.context or [] for m in messages(e))]


def refusal(schema: dict, data: list) -> str:
    """What the schema says of a file: all its errors' messages, or '' when it is valid."""
    return "\n".join(m for e in validator(schema).iter_errors(data) for m in messages(e))


def test_each_schema_is_a_valid_2020_12_schema_with_its_id_and_title():
    for published in FILE_SCHEMAS:
        schema = published.schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"].endswith(published.name) and schema["title"]
        assert schema["description"]


@pytest.mark.parametrize("path", item_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_file_is_valid_against_its_schema(path):
    data, _ = read_yaml(path)  # as the loader reads it
    errors = list(validator(file_schema(path).schema()).iter_errors(data))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_which_schema_a_file_has():
    assert len(item_files()) >= 20
    assert file_schema(CASES_DIR / "security.yaml") is CASE_FILE
    assert file_schema(SCENARIOS_DIR / "safety.yaml") is SCENARIO_FILE
    assert file_schema(SCENARIOS_DIR / "criteria.yaml") is CRITERIA_FILE


@pytest.mark.parametrize("path", item_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_file_names_its_schema_on_its_first_line(path):
    line = schema_line(path)
    assert line == f"# yaml-language-server: $schema=../schemas/{file_schema(path).name}" \
                   ".schema.json"
    assert names_schema(path.read_text(encoding="utf-8"), line), (
        f"{path}: its first line should be {line!r} (`python -m evals schema` adds it)")


@pytest.mark.parametrize(("entry", "said"), [
    # an unknown kind fits no kind of the union, each of which names itself
    ({"kind": "mentions_tol", "value": "Form 4"}, "'mentions_tool' was expected"),
    ({"kind": "mentions_tool"}, "'value' is a required property"),
    ({"kind": "mentions_tool", "value": 4}, "4 is not of type 'string'"),
    ({"kind": "called_tool", "value": "search_manuals"}, "'search_manuals' is not one of"),
    ({"kind": "no_unknown_tools", "value": "x"}, "('value' was unexpected)"),
    ({"kind": "contains_all", "value": "one"}, "'one' is not of type 'array'"),
    ({"kind": "no_unrequested_action", "allowed": ["search_manual"]},
     "'search_manual' is not one of"),
    ({"kind": "rubric", "rubric": "kind"}, "is not valid under any"),  # judged: not authored
    ({"value": "Form 4"}, "'kind' is a required property"),
])
def test_a_wrong_assertion_is_refused_by_the_schema_and_the_loader(entry, said):
    case = {**CASE, "assert": [entry]}
    for data in ([case], [{**CASE, "id": "first"}, case]):  # the first entry, and any other
        assert said in refusal(CASE_FILE.schema(), data)
    assert case_errors(case)


@pytest.mark.parametrize(("case", "said"), [
    ({**CASE, "promt": "typo"}, "'promt' was unexpected"),
    ({"id": "a-case", "prompt": "Hi"}, "'assert' is a required property"),  # nothing checks it
    ({**CASE, "file": "x.yaml"}, "'file' was unexpected"),  # the loader sets it
    ({**CASE, "context": {"page": "shelf"}}, "'shelf' is not one of ['gallery', 'tool']"),
    ({**CASE, "history": [{"user": "hi", "assistant": "hello"}]}, "is valid under each of"),
    ({**CASE, "max_cost": 0}, "0 is less than or equal to the minimum of 0"),
    ({**CASE, "max_cost": True}, "True is not of type 'number'"),
    ({**CASE, "attack": {"channel": "carrier pigeon", "goal": "exfiltrate"}},
     "'carrier pigeon' is not one of"),
])
def test_a_wrong_case_is_refused_by_the_schema_and_the_loader(case, said):
    assert said in refusal(CASE_FILE.schema(), [{**CASE, "id": "first"}, case])
    assert case_errors(case)


def test_a_file_is_a_list_of_items_and_defaults():
    defaults = {"defaults": {"max_latency_s": 20}}
    assert refusal(CASE_FILE.schema(), [defaults, CASE]) == ""
    assert "'max_latency' was unexpected" in refusal(
        CASE_FILE.schema(), [{"defaults": {"max_latency": 20}}, CASE])
    assert refusal(CASE_FILE.schema(), {"id": "not-a-list"})
    # Only the first entry may be the defaults: the loader says so (an editor that reads draft 7
    # only has no prefixItems, so the schema lets any entry be either).
    assert refusal(CASE_FILE.schema(), [CASE, defaults]) == ""
    assert "only a file's first entry may be its defaults" in "\n".join(case_errors_of(
        [CASE, defaults]))


def test_the_schemas_use_what_an_editor_reads():
    """yaml-language-server before 1.20 validates with JSON Schema draft 7: no keyword it lacks
    (pydantic writes `$defs`, which a `$ref` reaches by its JSON pointer all the same)."""
    for published in FILE_SCHEMAS:
        text = published.text()
        for keyword in ("prefixItems", "unevaluatedProperties", "dependentRequired",
                        "$dynamicRef", "dependentSchemas", "unevaluatedItems"):
            assert f'"{keyword}"' not in text, (published.name, keyword)


def test_a_wrong_scenario_or_shared_criterion_is_refused():
    assert refusal(SCENARIO_FILE.schema(), [SCENARIO]) == ""
    for change, said in [
        ({"styles": ["grumpy"]}, "'grumpy' is not one of"),
        ({"styles": ["calm", "calm"]}, "has non-unique elements"),
        ({"max_turns": 40}, "40 is greater than the maximum of 12"),
        ({"assert": [{"kind": "identified_tool"}]}, "'value' is a required property"),
        ({"expect_actions": [{"tool": "fly"}]}, "'fly' is not one of"),
        ({"visitor": {"who": "a student"}}, "'wants' is a required property"),
    ]:
        assert said in refusal(SCENARIO_FILE.schema(), [{**SCENARIO, **change}]), change
    criterion = {"statement": "The assistant is kind.", "applies_to": "all"}
    assert refusal(CRITERIA_FILE.schema(), [criterion]) == ""
    assert "'applies_to' is a required property" in refusal(
        CRITERIA_FILE.schema(), [{"statement": "The assistant is kind."}])
    assert "'sometimes' is not one of" in refusal(
        CRITERIA_FILE.schema(), [{**criterion, "enforcement": "sometimes"}])


def test_the_schema_line_goes_first_and_replaces_another():
    line = schema_line(CASES_DIR / "new.yaml")
    assert line == "# yaml-language-server: $schema=../schemas/case-file.schema.json"
    text = "# about a\n- id: a\n"
    assert with_schema_line(text, line) == f"{line}\n{text}"
    assert with_schema_line(f"{line}\n{text}", line) == f"{line}\n{text}"
    old = "# yaml-language-server: $schema=../schemas/scenario-file.schema.json\n"
    assert with_schema_line(old + text, line) == f"{line}\n{text}"
    crlf = text.replace("\n", "\r\n")
    assert with_schema_line(crlf, line) == f"{line}\r\n{crlf}"
    assert names_schema(f"{line}\r\n{crlf}", line)
    assert with_schema_line("", line) == f"{line}\n"
