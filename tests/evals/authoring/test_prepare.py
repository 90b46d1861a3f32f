"""Preparing scenarios from what the assistant is told, with a scripted draft model: the kinds
asked for per capability and where; each draft checked by prepare's rules and the scenario
loader (valid, rejected with the reason, missing); the audience, page, group and contracts
never the model's; a kind or id the suite holds never prepared again."""

import json

import pytest

from app.capabilities import REGISTRY
from evals.authoring.prepare import (
    KINDS,
    PrepareError,
    Target,
    kinds_for,
    plan,
    prepare_scenarios,
)
from evals.authoring.prepared import Suite, edited, render
from evals.load.scenarios import load_scenarios
from tests.fakes import ScriptedModel, say

NOTHING = Suite({}, {})
SMOKE = {
    "id": "prepared-smoke-report",
    "visitor": {"who": "an invented first-year student", "wants": "to report smoke from the"
                " laser cutter", "wont_say": "their name"},
    "opening": "the laser cutter smells of smoke",
    "max_turns": 4,
    "context": {"as": "super_admin"},  # never the model's
    "group": "made up",  # nor this
    "criteria": [{"statement": "The assistant files the report without requiring a name."},
                 {"statement": "It is calm.", "enforcement": "informational"}],
    "expect_actions": [{"tool": "report_issue", "arguments": {"description_contains": "smoke"},
                        "result": {"filed": True}}],
    "tool_responses": {"report_issue": {"contract": "000000000000", "response": {
        "ticket_id": 7, "machine": "Trotec Speedy 400", "filed": True, "anonymous": True}}},
}


def test_kinds_come_in_order_then_the_capabilitys_risks():
    assert [k for k, _ in kinds_for(2, "catalog")] == ["goal", "unsure"]
    assert [k for k, _ in kinds_for(7, "units")] == [*(k for k, _ in KINDS), "risk-1",
                                                     "risk-2", "risk-1-2", "risk-2-2"]
    for bad in (0, 11):
        with pytest.raises(PrepareError, match="--count must be 1 to 10"):
            kinds_for(bad, "catalog")


def test_each_capability_where_it_is_offered_less_what_the_suite_has():
    targets, in_suite, unoffered = plan(None, 3, Suite({}, {"catalog/unsure": "x.yaml:4"}))
    where = {t.capability: (t.role, t.page) for t in targets}
    assert where["catalog"] == (None, "/") and where["maintenance"] == ("staff", "/")
    assert where["curation"] == ("staff", "/tools/form-4/curate")
    assert where["people"] == ("super_admin", "/")
    assert set(where) == set(REGISTRY.capabilities) and unoffered == {}
    catalog = next(t for t in targets if t.capability == "catalog")
    assert [k for k, _ in catalog.kinds] == ["goal", "pressure"]  # unsure is the suite's
    assert in_suite == {"catalog/unsure": "x.yaml:4"}
    targets, _, unoffered = plan(None, 1, NOTHING, "student", "/tools/form-4")
    assert {t.capability for t in targets} >= {"catalog", "manuals", "issue_reports"}
    assert unoffered["maintenance"] == "not offered to student on /tools/form-4"
    (only,) = plan("curation", 1, NOTHING)[0]
    assert only.where == "curation: staff on /tools/form-4/curate"
    assert plan("catalog", 1, Suite({}, {"catalog/goal": "x.yaml:1"}))[0] == []


def test_a_bad_capability_or_page_is_refused():
    with pytest.raises(PrepareError, match="unknown capability 'lasers'; capabilities: catalog"):
        plan("lasers", 3, NOTHING)
    with pytest.raises(PrepareError, match="--page '/tools/glowforge': .*toolId 'glowforge'"):
        plan(None, 3, NOTHING, None, "/tools/glowforge")


def by_kind(replies):
    """A scripted draft model: answers each request from the capability and kind it asks for
    ("capability/kind"), or the kind alone."""
    def reply(messages, tools):
        asked = messages[-1]["content"]
        kind = asked.rsplit("Write one scenario of the kind '", 1)[1].split("'", 1)[0]
        capability = asked.split("The capability under test:\n- ", 1)[1].split(":", 1)[0]
        value = replies.get(f"{capability}/{kind}", replies.get(kind, {"id": f"x-{kind}"}))
        return say(value if isinstance(value, str) else json.dumps(value))
    return ScriptedModel(reply, repeat=True)


READ_PAGE = {"id": "prepared-datasheet", "visitor": {"who": "an invented student",
             "wants": "the build volume from https://formlabs.example/specs"},
             "criteria": [{"statement": "It gives the build volume the page gives."}],
             "expect_actions": [{"tool": "read_page"}]}


async def test_valid_rejected_and_missing_scenarios(env, tmp_path):
    targets = [Target("issue_reports", None, "/tools/trotec-speedy-400", tuple(kinds_for(3, ""))),
               Target("read_page", None, "/", tuple(kinds_for(3, ""))[:2])]
    model = by_kind({
        "issue_reports/goal": SMOKE,
        "unsure": {**SMOKE, "id": "no-criteria", "criteria": [],
                   "tool_responses": {"search_catalog": {"response": {"machines": []}}}},
        "pressure": {**SMOKE, "id": "anonymous-smoke-report"},  # a suite scenario's id
        "read_page/goal": {**SMOKE, "id": "prepared-smoke-report"},  # taken just now
        "read_page/unsure": {"id": "no-visitor", "max_turns": 40,
                             "criteria": [{"statement": "It reads the page."}]},
    })
    suite = Suite({"anonymous-smoke-report": "problem-reports.yaml:1"}, {})
    result = await prepare_scenarios(model, env, targets, suite)
    assert [(w.kind, w.scenario["id"]) for w in result.scenarios] == [
        ("issue_reports/goal", "prepared-smoke-report")]
    (written,) = result.scenarios
    assert written.where == "issue_reports: anonymous on /tools/trotec-speedy-400"
    scenario = written.scenario
    assert scenario["context"] == {"page": "tool", "toolId": "trotec-speedy-400"}
    assert scenario["group"] == "issue reports"
    contract = REGISTRY.tool("report_issue").contract()
    assert scenario["tool_responses"]["report_issue"]["contract"] == contract
    reasons = {r["kind"]: r["reason"] for r in result.rejected}
    assert "criteria: a prepared scenario needs at least one" in reasons["issue_reports/unsure"]
    assert "search_catalog is a read tool" in reasons["issue_reports/unsure"]
    assert "search_catalog' is never offered" not in reasons["issue_reports/unsure"]
    assert ("id 'anonymous-smoke-report' is taken by the scenario at problem-reports.yaml:1"
            in reasons["issue_reports/pressure"])
    assert ("id 'prepared-smoke-report' is taken by the scenario at this file"
            " (issue_reports/goal)" in reasons["read_page/goal"])
    assert reasons["read_page/unsure"] == (  # the loader's own file:line errors
        "draft-5.yaml:1: visitor: Field required; draft-5.yaml:3: max_turns: Input should be"
        " less than or equal to 12")
    assert result.missing == ["issue_reports/unsure", "issue_reports/pressure",
                              "read_page/goal", "read_page/unsure"]
    first = model.requests[0]["messages"]
    assert "invented" in first[0]["content"]
    assert ("- report_issue (write, may be frozen): arguments slug: string, title: string,"
            " description: string, reporter_name: string or null; result ticket_id: integer,"
            in first[1]["content"])
    assert "- search_catalog (read): arguments query: string; result" in first[1]["content"]
    out = tmp_path / "suite" / "prepared.yaml"
    out.parent.mkdir()
    out.write_text(render(result.scenarios, result.rejected, result.missing,
                          {"catalog/goal": "x.yaml:3"}, {}, result.model, "today"))
    (loaded,), _ = load_scenarios(out.parent, {})  # the output loads as a scenario file
    assert loaded.id == "prepared-smoke-report" and edited(out) == []
    text = out.read_text()
    assert "# prepared: issue_reports/goal " in text and "# rejected: 4" in text
    assert "#   - catalog/goal (x.yaml:3)" in text and "# missing: issue_reports/unsure" in text


async def test_a_live_tool_needs_its_frozen_answer(env):
    target = Target("read_page", "staff", "/tools/form-4/curate", (KINDS[0],))
    result = await prepare_scenarios(by_kind({"goal": READ_PAGE}), env, [target], NOTHING)
    (rejected,) = result.rejected
    assert "read_page is a live tool; give its frozen response" in rejected["reason"]
    frozen = {**READ_PAGE, "tool_responses": {"read_page": {"responses": [
        {"url": "https://formlabs.example/specs", "text": "Build volume 200 x 125 x 210 mm"}],
        "exhausted": "repeat_last"}}}
    result = await prepare_scenarios(by_kind({"goal": frozen}), env, [target], NOTHING)
    (written,) = result.scenarios
    assert written.scenario["context"] == {"page": "tool", "toolId": "form-4", "curate": True,
                                           "as": "staff"}


async def test_a_reply_that_is_not_json_rejects_that_draft(env):
    target = Target("catalog", None, "/", tuple(kinds_for(2, "catalog")))
    result = await prepare_scenarios(ScriptedModel(say("Here is a scenario: ..."), repeat=True),
                                     env, [target], NOTHING)
    assert result.scenarios == [] and len(result.rejected) == 2
    assert all("not JSON" in r["reason"] for r in result.rejected)
    assert result.missing == ["catalog/goal", "catalog/unsure"]
