import pytest
from pydantic import BaseModel

from app.capabilities import (
    REGISTRY,
    PageContext,
    PromptContext,
    Registry,
    RegistryError,
    Tool,
    capability,
    tool,
)
from app.identity import Identity

STAFF_TOOLS = {"list_open_tickets", "update_ticket", "identify_tools"}


class NoArgs(BaseModel):
    pass


async def _run(ctx, args):
    return {}


def _tool(**over) -> Tool:
    fields = dict(name="do_thing", description="Does a thing.", args=NoArgs, kind="read",
                  run=_run, result=NoArgs)
    fields.update(over)
    return Tool(**fields)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"name": "Bad-Name"}, "tool name 'Bad-Name' must match"),
        ({"description": "  "}, "needs a description"),
        ({"kind": "delete"}, "kind 'delete' is not one of"),
        ({"args": dict}, "args must be a pydantic model class"),
        ({"result": None}, "result must be a pydantic model class"),
        ({"run": lambda ctx, args: {}}, "run must be an async function"),
        ({"kind": "action"}, "needs an async apply function"),
        ({"apply": _run}, "only action tools have an apply function"),
    ],
)
def test_invalid_tools_fail_at_registration(over, message):
    reg = Registry()
    with pytest.raises(RegistryError, match=message):
        capability("thing", audience={"staff"}, tools=[_tool(**over)], registry=reg)(lambda c: "")


def test_tool_decorator_validates_and_takes_the_docstring():
    @tool(kind="read", args=NoArgs, result=NoArgs)
    async def look_up(ctx, args):
        """Looks something up."""

    assert look_up.description == "Looks something up."
    with pytest.raises(RegistryError, match="needs a description"):
        @tool(kind="read", args=NoArgs, result=NoArgs)
        async def undocumented(ctx, args):
            pass


def test_duplicate_names_and_bad_audiences_are_refused():
    reg = Registry()
    capability("one", audience={"staff"}, tools=[_tool()], registry=reg)(lambda c: "")
    with pytest.raises(RegistryError, match="registered twice"):
        capability("one", audience={"staff"}, registry=reg)(lambda c: "")
    with pytest.raises(RegistryError, match="already belongs to 'one'"):
        capability("two", audience={"staff"}, tools=[_tool()], registry=reg)(lambda c: "")
    with pytest.raises(RegistryError, match="audience"):
        capability("three", audience={"admin"}, registry=reg)(lambda c: "")


def _tools_for(identity, page=None):
    page = page or PageContext()
    ctx = PromptContext(identity=identity, page=page, catalogue=[])
    return {t.name for c in REGISTRY.for_context(ctx) for t in c.tools}


STUDENT = Identity(2, "alex", "Alex Kim", "student")
STAFF = Identity(1, "supermaker", "SuperMaker", "staff")
DIRECTOR = Identity(3, "director", "Dr. Priya Nair", "super_admin")


def test_identity_decides_the_tool_set():
    anonymous, student = _tools_for(None), _tools_for(STUDENT)
    staff, director = _tools_for(STAFF), _tools_for(DIRECTOR)
    assert "report_issue" in anonymous and "search_catalog" in anonymous
    assert anonymous == student
    assert not STAFF_TOOLS & student
    assert STAFF_TOOLS <= staff
    assert "set_person_title" in director and "set_person_title" not in staff
    assert staff <= director


def test_curation_only_when_staff_curate_a_tool_page():
    curate = PageContext(path="/tools/form-4/curate", kind="curate", machine={"slug": "form-4"})
    assert "propose_change" in _tools_for(STAFF, curate)
    assert "propose_change" not in _tools_for(STAFF)
    assert "propose_change" not in _tools_for(STUDENT, curate)


def test_every_registered_tool_has_a_valid_schema():
    tools = REGISTRY.all_tools()
    assert tools, "no tool is registered: the loop below would check nothing"
    for t in tools.values():
        schema = t.schema()
        assert schema["function"]["name"] == t.name
        assert schema["function"]["parameters"]["type"] == "object"


FROZEN_OFTEN = ("read_page", "search_manual", "search_catalog", "list_open_tickets",
                "get_machine_details")


def test_the_tools_frozen_most_often_declare_result_examples_that_fit():
    for name in FROZEN_OFTEN:
        t = REGISTRY.tool(name)
        assert len(t.examples()) >= 2, name
        for example in t.examples():
            t.result.model_validate(example)


def test_examples_are_no_part_of_a_tools_contract():
    from pydantic import ConfigDict

    class Plain(BaseModel):
        text: str

    class Documented(BaseModel):
        model_config = ConfigDict(json_schema_extra={"examples": [{"text": "hello"}]})
        text: str

    plain, documented = _tool(result=Plain), _tool(result=Documented)
    assert documented.examples() == [{"text": "hello"}] and plain.examples() == []
    # (their titles differ too: a contract never hashed a title)
    assert plain.contract() == documented.contract()
