import pytest

from evals.checks import CHECKS
from evals.execute.attempt import attempt
from evals.execute.executors import EXECUTORS, AppTurn, EndpointTurn, Setup, executor
from evals.load.cases import load_cases
from evals.load.conversations import conversations
from evals.load.scenarios import load_scenarios
from tests.fakes import ScriptedModel, say


def test_every_kind_of_item_has_its_executor_registered():
    assert {"app", "endpoint", "conversation"} <= set(EXECUTORS)
    cases, (scenarios, shared) = load_cases(), load_scenarios()
    items = [*cases, *conversations(scenarios, shared, full=False)]
    assert items and {i.executor for i in items} == {"app", "conversation"}
    assert all(i.executor in EXECUTORS for i in items)


def test_an_executor_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        executor("app")(AppTurn)


async def test_the_case_executors_refuse_a_conversation(env):
    scenarios, shared = load_scenarios()
    [item, *_] = conversations(scenarios, shared, full=False)
    for run in (AppTurn(), EndpointTurn()):
        with pytest.raises(TypeError, match="runs cases, not Conversation"):
            await run.run(item, Setup(env, ScriptedModel(say("x"))))


async def test_evidence_that_cannot_be_gathered_is_an_error_that_keeps_the_answer(
        env, monkeypatch):
    import evals.execute.executors as executors

    async def broken(*args, **kwargs):
        raise OSError("blob server gone")

    monkeypatch.setattr(executors, "citation_evidence", broken)
    case = next(c for c in load_cases() if any(CHECKS[k.kind].needs_evidence for k in c.checks))
    done = await attempt(case, Setup(env, ScriptedModel(say("See the manual."))))
    assert done.error == "gathering citation evidence failed: blob server gone"
    assert done.answer == "See the manual." and done.checks == []
    assert done.turns == [] and done.transcript.attached_manuals == []  # the answer, no more
