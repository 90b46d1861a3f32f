"""Drafting cases from what the assistant is told, with a scripted model: the kinds asked for,
valid, rejected (with the loader's reason) and missing drafts; the context never the model's."""

import json

import pytest

from evals.authoring.draft import KINDS, DraftError, draft_cases, kinds_for, render
from evals.authoring.told import told
from evals.load.cases import load_cases
from tests.fakes import ScriptedModel, say


def test_kinds_come_in_order_then_the_capabilitys_risks():
    assert [k for k, _ in kinds_for(3, ["catalog"])] == ["ordinary", "unrecorded-spec",
                                                         "missing-machine"]
    twelve = [k for k, _ in kinds_for(12, ["units"])]
    assert twelve[:9] == [k for k, _ in KINDS]
    assert twelve[9:] == ["risk:units:1", "risk:units:2", "risk:units:1#2"]
    for bad in (0, 26):
        with pytest.raises(DraftError, match="--count must be 1 to 25"):
            kinds_for(bad, [])


def by_kind(replies):
    """A scripted draft model: answers each request from the kind it asks for."""
    def reply(messages, tools):
        asked = messages[-1]["content"]
        kind = asked.rsplit("Write one case of the kind '", 1)[1].split("'", 1)[0]
        value = replies.get(kind, {"id": f"x-{kind}"})
        return say(value if isinstance(value, str) else json.dumps(value))
    return ScriptedModel(reply, repeat=True)


async def test_valid_rejected_and_missing_drafts(env, tmp_path):
    shown = await told(env, None, "/tools/form-4")
    model = by_kind({
        "ordinary": {"id": "drafted-wash-time", "prompt": "How long do I wash parts?",
                     "context": {"as": "super_admin"},  # never the model's: the command's
                     "assert": [{"kind": "called_tool", "value": "search_manual"}]},
        "unrecorded-spec": {"id": "drafted-laser-power", "prompt": "What wattage?",
                            "assert": [{"kind": "made_up_kind"}]},
        "missing-machine": {"id": "no-glowforge", "prompt": "Glowforge?",
                            "rubric": "Says the lab has none."},  # an id the suite has
        "needs-tool": {"id": "drafted-no-check", "prompt": "Is it free?"},
        "needs-confirmation": "I cannot write that as JSON, sorry",
        "off-topic": {"id": ["not", "text"], "prompt": "poem?", "rubric": "Declines."},
    })
    result = await draft_cases(model, shown, 6)
    assert [(k, c["id"]) for k, c in result.cases] == [("ordinary", "drafted-wash-time")]
    assert result.cases[0][1]["context"] == {"page": "tool", "toolId": "form-4"}
    reasons = {r["kind"]: r["reason"] for r in result.rejected}
    assert "unknown assertion kind 'made_up_kind'" in reasons["unrecorded-spec"]
    assert "draft-2.yaml:" in reasons["unrecorded-spec"]  # the loader's file:line message
    assert "id 'no-glowforge' is taken" in reasons["missing-machine"]
    assert "a case needs assert, rubric or must_not" in reasons["needs-tool"]
    assert "not JSON" in reasons["needs-confirmation"]
    assert reasons["off-topic"] == "id must be text, not list"
    assert [r["draft"] for r in result.rejected][0]["id"] == "drafted-laser-power"  # kept
    assert result.missing == ["unrecorded-spec", "missing-machine", "needs-tool",
                              "needs-confirmation", "off-topic"]
    assert len(model.requests) == 6
    first = model.requests[0]["messages"]
    assert shown.system_prompt in first[1]["content"] and "invented" in first[0]["content"]
    out = tmp_path / "drafted.yaml"
    out.write_text(render(result, shown, "today"))
    (case,) = load_cases(out)  # the output loads as a case file once reviewed
    text = out.read_text()
    assert case.id == "drafted-wash-time" and "# kind: ordinary" in text
    assert "# rejected: 5" in text and "# missing: unrecorded-spec" in text
    assert '"prompt": "What wattage?", "assert": [{"kind": "made_up_kind"}]' in text  # whole


async def test_a_reply_that_is_not_json_rejects_every_draft(env):
    shown = await told(env, "student", "/")
    result = await draft_cases(ScriptedModel(say("Sure! Here are some cases: ..."),
                                             repeat=True), shown, 3)
    assert result.cases == [] and len(result.rejected) == 3
    assert all("not JSON" in r["reason"] for r in result.rejected)
    assert result.missing == ["ordinary", "unrecorded-spec", "missing-machine"]


async def test_an_unknown_capability_is_refused(env):
    shown = await told(env, None, "/")
    with pytest.raises(DraftError, match="unknown capability 'lasers'"):
        await draft_cases(ScriptedModel(), shown, 3, "lasers")
