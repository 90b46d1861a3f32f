"""What a run runs: cases and scenario conversations selected by file, id or group, and an
unknown name refused with the valid ones listed."""

import pytest

from evals.load.cases import CaseFileError, load_cases
from evals.load.scenarios import load_scenarios
from evals.load.selection import has_conversations, select_groups, select_items
from evals.record.fingerprint import Selection
from tests.evals.helpers import select


def test_selection_by_file_or_id_and_unknown_names_list_the_valid_ones():
    cases = load_cases()
    assert {c.file for c in select(cases, "honest-absence")} == {"honest-absence.yaml"}
    assert [c.id for c in select(cases, "no-glowforge, where-is-the-lab")] == [
        "no-glowforge", "where-is-the-lab"]
    with pytest.raises(CaseFileError, match="unknown 'nope'. Files: catalog-lookup"):
        select(cases, "nope")
    assert select(cases, "") == cases


def test_groups_select_cases_and_leave_the_plan_alone(tmp_path):
    from evals.load.plan import plan_info

    cases = load_cases()
    staff = select_groups(cases, ("staff queue",))
    assert staff and all(c.file == "staff-maintenance.yaml" for c in staff)
    both = select_groups(cases, ("staff queue", "safety and care"))
    assert len(both) == len(staff) + len(select_groups(cases, ("safety and care",)))
    with pytest.raises(CaseFileError,
                       match="unknown 'nope'. Groups: languages, photo identification"):
        select_groups(cases, ("nope",))
    regrouped = [c.model_copy(update={"group": "other"}) for c in staff]
    kw = {"judge_model": None, "judge_prompt_hash": None, "repeat": 1}
    assert plan_info(regrouped, **kw).fingerprint == plan_info(staff, **kw).fingerprint


def test_a_run_holds_the_cases_then_the_conversations():
    items = select_items(Selection())
    kinds = [i.executor for i in items]
    assert {"app", "conversation"} <= set(kinds)
    assert kinds == sorted(kinds)  # every case ("app") before every conversation
    assert has_conversations(items) and not has_conversations(
        select_items(Selection(only="cases")))
    assert [i.id for i in select_items(Selection(only="cases"))] == [
        i.id for i in items if i.executor == "app"]
    assert [i.id for i in select_items(Selection(only="scenarios"))] == [
        i.id for i in items if i.executor == "conversation"]


def test_names_are_case_files_case_ids_scenario_files_and_scenario_ids():
    picked = select_items(Selection.of("lab-identity,no-glowforge,machines-we-lack,"
                                       "anonymous-smoke-report"))
    files = {i.file for i in picked}
    assert files == {"lab-identity.yaml", "honest-absence.yaml", "machines-we-lack.yaml",
                     "problem-reports.yaml"}
    assert [i.id for i in picked if i.file == "honest-absence.yaml"] == ["no-glowforge"]
    assert [i.id for i in picked if i.file == "problem-reports.yaml"] == [
        "anonymous-smoke-report@calm"]
    assert {i.id for i in picked if i.file == "machines-we-lack.yaml"} == {
        "glowforge-under-pressure@calm", "cnc-router-for-aluminium@calm"}
    full = select_items(Selection.of("glowforge-under-pressure", full=True))
    assert [i.id for i in full] == ["glowforge-under-pressure@calm",
                                    "glowforge-under-pressure@insistent"]
    with pytest.raises(CaseFileError, match="EVAL_CASES: unknown 'nope'. Case and scenario"
                                            " files: catalog-lookup, citations-resolve,"
                                            " curation, ") as refused:
        select_items(Selection.of("nope,no-glowforge"))
    assert "criteria" not in str(refused.value)  # the shared criteria are not a scenario file


def test_groups_select_across_cases_and_scenarios():
    safety = select_items(Selection.of(None, "safety and care,safety"))
    assert {i.group for i in safety} == {"safety and care", "safety"}
    assert {i.executor for i in safety} == {"app", "conversation"}
    with pytest.raises(CaseFileError, match="--group: unknown 'nope'. Groups: curation"):
        select_items(Selection.of(None, "nope"))
    assert select_groups([], ()) == [] and select_groups(safety, ()) == safety


def test_a_case_file_given_by_path_runs_alone(tmp_path):
    (tmp_path / "mine.yaml").write_text(
        '- id: mine\n  prompt: "p"\n  assert:\n    - kind: no_unknown_tools\n')
    items = select_items(Selection.of(file=str(tmp_path)))
    assert [(i.id, i.executor) for i in items] == [("mine", "app")]


def test_a_case_file_and_a_scenario_file_of_one_name_are_refused(tmp_path, monkeypatch):
    import evals.load.selection as selection

    (tmp_path / "honest-absence.yaml").write_text(
        "- id: also-absent\n  visitor: {who: a student, wants: a laser}\n"
        "  end_state: [{table: proposals, exists: false}]\n")
    monkeypatch.setattr(selection, "load_scenarios",
                        lambda **kw: load_scenarios(tmp_path, **kw))
    with pytest.raises(CaseFileError, match="honest-absence.yaml is both a case file and a"
                                            " scenario file: rename one"):
        select_items(Selection())
