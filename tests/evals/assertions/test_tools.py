from tests.evals.assertions.helpers import call, check


def test_called_and_not_called_tool():
    calls = [call("search_catalog", {"query": "laser"})]
    assert check("called_tool", calls=calls, value="search_catalog")[0]
    passed, reason = check("called_tool", calls=calls, value="get_unit_status")
    assert not passed and "called ['search_catalog']" in reason
    passed, reason = check("not_called_tool", calls=calls, value="search_catalog")
    assert not passed and "{'query': 'laser'}" in reason
    assert check("not_called_tool", calls=[], value="report_issue")[0]


def test_proposed_action_needs_a_proposal():
    proposed = [call("update_ticket", {"ticket_id": 1}, {"proposed": True}, "action")]
    assert check("proposed_action", calls=proposed, value="update_ticket")[0]
    failed = [call("update_ticket", {"ticket_id": 1}, {"error": "no ticket"}, "action")]
    assert not check("proposed_action", calls=failed, value="update_ticket")[0]
