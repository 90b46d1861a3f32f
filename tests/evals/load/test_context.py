"""Where an item runs: a context's rules (a tool page needs its machine, a selection its page),
its page path and key, the context a page and an audience give, and the tools offered there."""

import pytest
from pydantic import ValidationError

from evals.checks import About
from evals.load.cases import load_cases
from evals.load.context import Context, context_for, offered_tools
from evals.load.scenarios import load_scenarios


@pytest.mark.parametrize(("given", "refused"), [
    ({"page": "tool"}, "page: tool needs a toolId"),
    ({"toolId": "form-4"}, "toolId goes with page: tool"),
    ({"curate": True}, "curate: true goes with page: tool"),
    ({"page": "tool", "toolId": "glowforge"}, "toolId 'glowforge' is not a slug in the demo"),
    ({"page": "tool", "toolId": "ultimaker-3"}, "not a slug in the demo catalogue"),
    ({"page": "tool", "toolId": "form-4", "path": "/people"}, "give either page: tool"),
    ({"selection": ["Resin tank film clouded"]}, "selection needs a path"),
    ({"as": "janitor"}, "Input should be 'student', 'staff' or 'super_admin'"),
    ({"colour": "red"}, "Extra inputs are not permitted"),
])
def test_a_context_that_cannot_be_is_refused(given, refused):
    with pytest.raises(ValidationError, match=refused):
        Context.model_validate(given)


def test_the_page_path_the_key_and_what_the_judge_is_told():
    assert Context().page_path == "/" and Context().key == "anonymous / demo"
    tool = Context.model_validate({"page": "tool", "toolId": "form-4", "as": "staff"})
    assert tool.page_path == "/tools/form-4" and tool.key == "staff /tools/form-4 demo"
    curate = tool.model_copy(update={"curate": True})
    assert curate.page_path == "/tools/form-4/curate"
    lab = Context.model_validate({"page": "tool", "toolId": "ultimaker-3", "catalog": "lab"})
    assert lab.key == "anonymous /tools/ultimaker-3 lab"
    queue = Context.model_validate({"path": "/staff/tickets", "as": "staff",
                                    "selection": ["Resin tank film clouded"]})
    assert queue.key == "staff /staff/tickets demo"  # the selection is not the page
    assert queue.about(("IMG_2041.jpg",)) == About("/staff/tickets", "staff", "demo",
                                                   ("IMG_2041.jpg",))


def test_a_page_and_an_audience_give_back_every_shipped_context():
    scenarios, _ = load_scenarios()
    contexts = {c.context for c in load_cases()} | {s.context for s in scenarios}
    assert len(contexts) >= 5
    for ctx in contexts:
        again = Context.model_validate({**context_for(ctx.page_path, ctx.as_),
                                        "catalog": ctx.catalog})
        assert (again.page_path, again.as_) == (ctx.page_path, ctx.as_), ctx
    assert context_for("/", None) == {}
    assert context_for("/tools/form-4/curate", "staff") == {
        "page": "tool", "toolId": "form-4", "curate": True, "as": "staff"}


def test_the_tools_offered_follow_the_audience_and_the_page():
    def offered(**given):
        return offered_tools(Context.model_validate(given))

    visitor = offered()
    assert {"search_catalog", "report_issue"} <= visitor
    assert not visitor & {"list_open_tickets", "update_ticket", "propose_change"}
    assert offered(**{"as": "student"}) == visitor
    staff = offered(**{"as": "staff", "path": "/staff/tickets"})
    assert {"list_open_tickets", "update_ticket"} <= staff and "propose_change" not in staff
    curate = offered(**{"as": "staff", "page": "tool", "toolId": "form-4", "curate": True})
    assert curate - staff == {"propose_change"}
    assert "set_person_title" in offered(**{"as": "super_admin", "path": "/people"})
    assert "set_person_title" not in staff


def test_the_capabilities_offered_by_audience_and_page():
    from evals.load.context import offered_capabilities

    def names(**context):
        return {c.name for c in offered_capabilities(Context.model_validate(context))}

    anonymous = names()
    assert {"catalog", "issue_reports", "read_page"} <= anonymous
    assert not anonymous & {"maintenance", "people", "curation"}
    assert "maintenance" in names(**{"as": "staff"})
    assert "curation" not in names(**{"as": "staff", "page": "tool", "toolId": "form-4"})
    assert "curation" in names(**{"as": "staff", "page": "tool", "toolId": "form-4",
                                  "curate": True})
    assert "people" in names(**{"as": "super_admin"})
