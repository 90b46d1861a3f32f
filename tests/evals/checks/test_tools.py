import re

import pytest
from pydantic import ValidationError

from evals.checks import CHECKS, CheckSpec
from tests.evals.checks.helpers import call, check


def test_called_and_not_called_tool():
    calls = [call("search_catalog", {"query": "laser"})]
    assert check("called_tool", calls=calls, value="search_catalog")[0]
    passed, reason = check("called_tool", calls=calls, value="get_unit_status")
    assert not passed and "calls: search_catalog" in reason
    passed, reason = check("not_called_tool", calls=calls, value="search_catalog")
    assert not passed and "{'query': 'laser'}" in reason
    assert check("not_called_tool", calls=[], value="report_issue")[0]


def test_proposed_action_needs_a_proposal():
    proposed = [call("update_ticket", {"ticket_id": 1}, {"proposed": True}, "action")]
    assert check("proposed_action", calls=proposed, value="update_ticket")[0]
    failed = [call("update_ticket", {"ticket_id": 1}, {"error": "no ticket"}, "action")]
    assert not check("proposed_action", calls=failed, value="update_ticket")[0]


def test_a_call_that_never_ran_does_not_count():
    for outcome, result in (("invalid_arguments", {"error": "arguments are not JSON"}),
                            ("unknown_tool", {"error": "no tool"}),
                            ("error", {"error": "boom"})):
        calls = [{**call("search_catalog", "{not json", result), "outcome": outcome}]
        passed, reason = check("called_tool", calls=calls, value="search_catalog")
        assert not passed and outcome in reason
        # ... but an attempted call still counts against not_called_tool
        assert not check("not_called_tool", calls=calls, value="search_catalog")[0]
    bad = [{**call("update_ticket", {}, {"proposed": True}, "action"),
            "outcome": "invalid_arguments"}]
    assert not check("proposed_action", calls=bad, value="update_ticket")[0]


def test_outcome_is_derived_from_an_older_recorded_error():
    calls = [{**call("search_catalog", "{", {"error": "x"}), "error": "bad_json"}]
    assert not check("called_tool", calls=calls, value="search_catalog")[0]


REPORT = [call("report_issue", {"slug": "form-4", "title": "Grinding tank",
                                "description": "grinding noise"}, {"filed": True}, "write"),
          call("report_issue", {"slug": "trotec-speedy-400", "title": "Smoke",
                                "description": "it smoked"}, {"filed": True}, "write")]


@pytest.mark.parametrize(("selectors", "passes"), [
    ({"arguments": {"slug": "Trotec-Speedy-400"}}, True),
    ({"arguments": {"slug": "prusa-mk4"}}, False),
    ({"arguments": {"slug_in": ["prusa-mk4", "form-4"]}}, True),
    ({"arguments": {"slug_in": ["prusa-mk4", "ultimaker-s3"]}}, False),
    ({"arguments": {"description_contains": "SMOKE"}}, True),
    ({"arguments": {"description_contains": "fire"}}, False),
    ({"arguments": {"title_matches": r"^grind"}}, True),
    ({"arguments": {"title_matches": r"^tank"}}, False),
    # every selector must fit one and the same call
    ({"arguments": {"slug": "form-4", "description_contains": "smoked"}}, False),
    ({"arguments": {"slug": "form-4"}, "result": {"filed": True}}, True),
    ({"arguments": {"slug": "form-4"}, "result": {"filed": False}}, False),
])
def test_called_tool_counts_only_a_call_that_fits_its_selectors(selectors, passes):
    passed, reason = check("called_tool", calls=REPORT, value="report_issue", **selectors)
    assert passed == passes, reason
    if not passes:
        assert reason.startswith("report_issue ran 2 time(s), none fits: ")


def test_a_call_that_fits_but_never_ran_does_not_count_for_called_tool():
    refused = [{**REPORT[1], "outcome": "error"}]
    passed, reason = check("called_tool", calls=refused, value="report_issue",
                           arguments={"slug": "trotec-speedy-400"})
    assert not passed and reason == "no call of report_issue ran; calls: report_issue (error)"


def test_not_called_tool_fails_on_any_attempt_that_fits_its_selectors():
    assert check("not_called_tool", calls=REPORT, value="report_issue",
                 arguments={"slug": "prusa-mk4"}) == (
        True, "did not call report_issue with arguments {'slug': 'prusa-mk4'}")
    passed, reason = check("not_called_tool", calls=REPORT, value="report_issue",
                           arguments={"slug_in": ["prusa-mk4", "trotec-speedy-400"]})
    assert not passed and "trotec-speedy-400" in reason
    # an attempt counts whatever its outcome
    invalid = [{**REPORT[1], "outcome": "invalid_arguments"}]
    assert not check("not_called_tool", calls=invalid, value="report_issue",
                     arguments={"description_contains": "smoke"})[0]
    # a result selector narrows to calls with that result
    assert check("not_called_tool", calls=REPORT, value="report_issue",
                 result={"filed": False})[0]


def test_proposed_action_counts_only_a_proposal_that_fits_its_selectors():
    proposals = [call("update_ticket", {"ticket_id": 1, "status": "resolved"},
                      {"proposed": True}, "action"),
                 call("update_ticket", {"ticket_id": 2, "note": "ordered"},
                      {"error": "no ticket"}, "action")]
    assert check("proposed_action", calls=proposals, value="update_ticket",
                 arguments={"status": "resolved"})[0]
    passed, reason = check("proposed_action", calls=proposals, value="update_ticket",
                           arguments={"ticket_id": 2})
    assert not passed and reason == ("update_ticket proposed 1 time(s), none fits: ticket_id"
                                     " is 1, not 2")
    assert check("proposed_action", calls=proposals, value="update_ticket",
                  arguments={"status_in": ["resolved", "in_progress"]},
                  result={"proposed": True})[0]


def test_a_check_without_selectors_is_labelled_and_dumped_as_before():
    for kind, tool in (("called_tool", "report_issue"), ("not_called_tool", "report_issue"),
                       ("proposed_action", "update_ticket")):
        spec = CheckSpec(kind, CHECKS[kind].args.model_validate({"value": tool}))
        assert spec.describe() == f"{kind} {{'value': '{tool}'}}"
        assert spec.args.model_dump(mode="json") == {"value": tool}
        empty = CHECKS[kind].args.model_validate({"value": tool, "arguments": {}})
        assert empty.model_dump(mode="json") == {"value": tool}
    with_selectors = CheckSpec("called_tool", CHECKS["called_tool"].args.model_validate(
        {"value": "report_issue", "arguments": {"slug": "form-4"}}))
    assert with_selectors.describe() == (
        "called_tool {'value': 'report_issue', 'arguments': {'slug': 'form-4'}}")


@pytest.mark.parametrize(("args", "message"), [
    ({"value": "report_issue", "arguments": {"machine": "form-4"}},
     "report_issue arguments: unknown field 'machine'; known: description, reporter_name,"
     " slug, title"),
    ({"value": "report_issue", "result": {"ticket_id_contains": "3"}},
     "report_issue result: ticket_id_contains: ticket_id is not text"),
    ({"value": "update_ticket", "arguments": {"status_in": []}},
     "update_ticket arguments: status_in needs a list of one or more plain values"),
    ({"value": "read_page", "arguments": {"url_matches": "(unclosed"}},
     "read_page arguments: url_matches: not a valid pattern"),
])
def test_a_selector_the_tool_cannot_have_is_refused_by_the_arguments_model(args, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        CHECKS["called_tool"].args.model_validate(args)
