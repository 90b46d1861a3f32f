"""Latency and cost limits in case and scenario files: per item, per file (a defaults entry),
their file:line errors, and what the plan fingerprint hashes of them."""

import textwrap

import pytest

from evals.load.cases import CaseFileError, load_cases
from evals.load.scenarios import ScenarioFileError, load_scenarios
from tests.evals.load.helpers import item_of

CASE = """\
- id: no-glowforge
  prompt: Do you have a Glowforge?
  assert: [{kind: contains_all, value: [sorry]}]
"""


def write(tmp_path, text, name="f.yaml"):
    (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def limits(case):
    return [(c.kind, c.args.model_dump(), c.line) for c in case.checks
            if c.kind in ("max_latency", "max_cost")]


def case_errors(tmp_path, text):
    with pytest.raises(CaseFileError) as info:
        load_cases(write(tmp_path, text), tmp_path)
    return info.value.errors


def test_a_case_limit_becomes_a_check_at_its_line(tmp_path):
    [case] = load_cases(write(tmp_path, CASE + "  max_latency_s: 12\n  max_cost: 0.002\n"),
                        tmp_path)
    assert limits(case) == [("max_latency", {"limit_s": 12.0}, 4),
                            ("max_cost", {"limit_usd": 0.002}, 5)]
    assert case.max_latency_s == 12 and case.max_cost == 0.002


def test_a_file_default_applies_to_every_case_and_a_case_s_own_value_wins(tmp_path):
    text = "- defaults: {max_latency_s: 20, max_cost: 0.01}\n" + CASE + \
        CASE.replace("no-glowforge", "no-cnc") + "  max_cost: 0.5\n"
    first, second = load_cases(write(tmp_path, text), tmp_path)
    assert limits(first) == [("max_latency", {"limit_s": 20.0}, 1),
                             ("max_cost", {"limit_usd": 0.01}, 1)]
    assert limits(second) == [("max_latency", {"limit_s": 20.0}, 1),
                              ("max_cost", {"limit_usd": 0.5}, 8)]


@pytest.mark.parametrize(("text", "expected"), [
    (CASE + "  max_cost: -1\n", "f.yaml:4: max_cost: Input should be greater than 0"),
    (CASE + "  max_latency_s: soon\n", "f.yaml:4: max_latency_s: Input should be a valid number"),
    (CASE + "  max_latency_s: .inf\n", "f.yaml:4: max_latency_s: Input should be a finite"),
    (CASE + "  max_cost: true\n", "f.yaml:4: max_cost: Value error, True is not a number"),
    ("- defaults: {max_cost: 0}\n" + CASE,
     "f.yaml:1: defaults.max_cost: Input should be greater than 0"),
    ("- defaults:\n    max_latency: 3\n" + CASE,
     "f.yaml:2: defaults.max_latency: Extra inputs are not permitted"),
    ("- defaults: 3\n" + CASE, "f.yaml:1: defaults: Input should be a valid dictionary"),
    ("- defaults: {max_cost: 1}\n  id: x\n" + CASE,
     "f.yaml:1: the defaults entry holds only 'defaults:' (found id)"),
    (CASE + "- defaults: {max_cost: 1}\n",
     "f.yaml:4: defaults: only a file's first entry may be its defaults"),
])
def test_a_bad_limit_names_file_and_line(tmp_path, text, expected):
    errors = case_errors(tmp_path, text)
    assert any(e.startswith(expected) for e in errors), errors


def test_limits_are_hashed_only_when_set(tmp_path):
    def one(folder, text):
        (tmp_path / folder).mkdir()
        [case] = load_cases(write(tmp_path / folder, text), tmp_path)
        return case.content()

    plain = one("plain", CASE)
    limited = one("limited", CASE + "  max_cost: 0.01\n")
    defaulted = one("defaulted", "- defaults: {max_cost: 0.01}\n" + CASE)
    assert "max_cost" not in str(plain)
    assert limited == defaulted != plain
    assert {"kind": "max_cost", "args": {"limit_usd": 0.01}} in limited["checks"]
    assert {k: v for k, v in limited.items() if k != "checks"} == \
        {k: v for k, v in plain.items() if k != "checks"}


SCENARIO = """\
- id: one
  visitor: {who: a student, wants: to find a printer}
  criteria:
    - statement: The assistant names the Form 4.
"""


def test_a_scenario_takes_its_own_limits_or_its_file_s(tmp_path):
    scenarios, _ = load_scenarios(write(
        tmp_path, "- defaults: {max_cost: 0.02}\n" + SCENARIO + "  max_latency_s: 90\n"))
    [s] = scenarios
    assert limits(s) == [("max_latency", {"limit_s": 90.0}, 6),
                         ("max_cost", {"limit_usd": 0.02}, 1)]
    assert "checks" in _conversation(tmp_path, SCENARIO + "  max_cost: 0.1\n").content()
    assert "checks" not in _conversation(tmp_path, SCENARIO).content()


def _conversation(tmp_path, text):
    folder = tmp_path / "one"
    folder.mkdir(exist_ok=True)
    return item_of(folder, text)


def test_a_bad_scenario_limit_names_file_and_line(tmp_path):
    with pytest.raises(ScenarioFileError) as info:
        load_scenarios(write(tmp_path, SCENARIO + "  max_latency_s: 0\n"))
    assert info.value.errors == ["f.yaml:5: max_latency_s: Input should be greater than 0"]


def test_a_limit_in_exponent_form_is_a_number(tmp_path):
    # YAML 1.1 reads 2e-3 as text; it is still the number a person wrote
    [case] = load_cases(write(tmp_path, CASE + "  max_cost: 2e-3\n"), tmp_path)
    assert case.max_cost == 0.002 and limits(case) == [("max_cost", {"limit_usd": 0.002}, 4)]
