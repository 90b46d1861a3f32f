from evals.execute.agent import agent_info, all_contexts
from evals.load.cases import load_cases
from evals.record.fingerprint import AgentSettings

SETTINGS = AgentSettings(max_tool_steps=6)


async def test_a_capability_fragment_changes_the_agent_not_the_plan(env, monkeypatch):
    from app.capabilities import REGISTRY

    cases = [c for c in load_cases() if c.id in ("no-glowforge", "student-gets-no-staff-tools")]
    git = ("abc", False)
    before = agent_info("m", SETTINGS, await all_contexts(env, cases), git)
    again = agent_info("m", SETTINGS, await all_contexts(env, cases), git)
    assert before.fingerprint == again.fingerprint
    cap = REGISTRY.capabilities["lab_identity"]
    monkeypatch.setitem(REGISTRY.capabilities, "lab_identity",
                        cap.__class__(**{**cap.__dict__, "prompt": lambda ctx: "changed"}))
    env.composed.clear()  # a later run composes afresh (a run composes each context once)
    after = agent_info("m", SETTINGS, await all_contexts(env, cases), git)
    assert after.fingerprint != before.fingerprint
    assert agent_info("m2", SETTINGS, before.contexts, git).fingerprint != before.fingerprint
    assert agent_info("m", SETTINGS, before.contexts, ("def", False)).fingerprint != \
        before.fingerprint
    assert agent_info("m", AgentSettings(max_tool_steps=2), before.contexts,
                      git).fingerprint != before.fingerprint


def test_the_chat_model_s_temperature_is_part_of_the_agent_and_unset_hashes_as_before():
    from app.settings import Settings
    from evals.execute.agent import agent_settings
    from evals.execute.impact import settings_words

    git = ("abc", False)
    unset = agent_settings(Settings(model_temperature=None))
    assert unset == SETTINGS and unset.temperature is None
    # an agent recorded before the temperature was kept has the same fingerprint
    assert agent_info("m", unset, {}, git).fingerprint == agent_info("m", SETTINGS, {},
                                                                     git).fingerprint
    warm = agent_settings(Settings(model_temperature=0.7))
    assert agent_info("m", warm, {}, git).fingerprint != agent_info("m", unset, {},
                                                                    git).fingerprint
    assert settings_words(warm) == "max_tool_steps 6, temperature 0.7"
    assert settings_words(unset) == "max_tool_steps 6"


def test_a_point_runs_its_model_as_it_was_asked_for():
    local = agent_info("openai/qwen2.5-coder-1.5b-instruct", SETTINGS, {}, ("c", False),
                       model_ref="local")
    assert local.ref == "local"  # not the local server's address-bound id
    assert local.fingerprint == agent_info("openai/qwen2.5-coder-1.5b-instruct", SETTINGS, {},
                                           ("c", False)).fingerprint
    assert agent_info("anthropic/x", SETTINGS, {}, ("c", False)).ref == "anthropic/x"


async def test_a_scenario_only_plan_still_freezes_what_the_assistant_is_told(env):
    from evals.load.conversations import conversations
    from evals.load.scenarios import load_scenarios

    items = conversations(*load_scenarios(), full=False)
    contexts = await all_contexts(env, items)
    assert items and set(contexts) == {i.context.key for i in items}
    assert all(c.system_prompt and c.tools for c in contexts.values())


async def test_each_context_s_fragments_are_handed_out_by_capability(env):
    cases = [c for c in load_cases() if c.id in ("no-glowforge", "staff-lists-open-tickets")]
    fragments: dict[str, dict[str, str]] = {}
    contexts = await all_contexts(env, cases, fragments)
    assert set(fragments) == set(contexts) == {"anonymous / demo", "staff / demo"}
    for key, parts in fragments.items():
        assert contexts[key].system_prompt == "\n\n".join(p for p in parts.values() if p)
    assert "maintenance" in fragments["staff / demo"]
    assert "maintenance" not in fragments["anonymous / demo"]
