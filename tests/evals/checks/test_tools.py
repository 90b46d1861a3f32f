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
