"""What a run runs: cases and scenario conversations selected by file, id or group, and an
unknown name refused with the valid ones listed."""

import pytest

from evals.load.cases import CaseFileError, load_cases
from evals.load.selection import select_groups
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
    with pytest.raises(CaseFileError, match="unknown 'nope'. Groups: photo identification"):
        select_groups(cases, ("nope",))
    regrouped = [c.model_copy(update={"group": "other"}) for c in staff]
    kw = {"judge_model": None, "judge_prompt_hash": None, "repeat": 1}
    assert plan_info(regrouped, **kw).fingerprint == plan_info(staff, **kw).fingerprint
