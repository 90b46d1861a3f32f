import pytest

from evals.execute.agent import FrozenAgentError, agent_info, all_contexts
from evals.execute.session import Prepared, Version
from evals.record.fingerprint import FrozenContext
from tests.evals.execute.helpers import SETTINGS, cases, plan, run
from tests.fakes import ScriptedModel, say


async def test_a_frozen_agent_is_run_as_it_was_told(env, store, settings):
    cs = cases("no-glowforge")
    key = cs[0].context.key
    contexts = await all_contexts(env, cs)
    old = contexts[key].model_copy(update={"system_prompt": "OLD PROMPT"})
    old.tools[0]["function"]["description"] = "OLD DESCRIPTION"
    frozen = agent_info("scripted/fake", SETTINGS, {key: FrozenContext(**old.model_dump())})
    baseline = ScriptedModel(say("We don't have a Glowforge."))
    current = ScriptedModel(say("We don't have a Glowforge."))
    await run(Prepared(env, store, settings), cs,
              [Version("baseline", baseline, frozen), Version("current", current)], plan(cs),
              concurrency=2)
    sent = baseline.requests[0]
    assert sent["messages"][0]["content"] == "OLD PROMPT"
    assert sent["tools"][0]["function"]["description"] == "OLD DESCRIPTION"
    assert current.requests[0]["messages"][0]["content"] != "OLD PROMPT"


async def test_a_frozen_agent_whose_tool_is_gone_is_refused(env, store, settings):
    cs = cases("no-glowforge")
    ctx = FrozenContext(system_prompt="x", tools=[
        {"type": "function", "function": {"name": "removed_tool", "description": "d",
                                          "parameters": {}}}])
    frozen = agent_info("scripted/fake", SETTINGS, {cs[0].context.key: ctx})
    with pytest.raises(FrozenAgentError, match="'removed_tool' no longer exists"):
        await run(Prepared(env, store, settings), cs,
                  [Version("baseline", ScriptedModel(), frozen)], plan(cs))
    assert await store.list_runs() == []  # the refusal happened before any run was stored
