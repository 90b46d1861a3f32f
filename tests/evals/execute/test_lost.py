"""A judge's or visitor's call lost to the provider, asked again in place: what is not asked
again (a request the provider refused, a call the guard refused), and what the attempt is told."""

import pytest

from app.chat.retry import ProviderError
from evals.execute.guard import NotCalled
from evals.execute.lost import PROVIDER_REATTEMPTS, AskedAgain, LostCall, losses
from tests.fakes import ScriptedModel, say


async def test_a_lost_call_is_asked_again_and_the_attempt_told_of_each_try():
    model = ScriptedModel(ProviderError("server", "openai/j: server: HTTP 503"), say("ok"))
    with losses() as lost:
        reply = await AskedAgain(model, "judge").complete([{"role": "user", "content": "q"}])
    assert reply.content == "ok" and len(model.requests) == 2
    assert lost.asked_again == ["the judge's call (scripted/fake): openai/j: server: HTTP 503"]
    assert lost.final is None


async def test_a_call_still_lost_after_its_tries_is_the_attempts_final_loss():
    model = ScriptedModel(ProviderError("rate_limit", "HTTP 429: slow down"), repeat=True)
    with losses() as lost, pytest.raises(LostCall) as raised:
        await AskedAgain(model, "visitor").complete([])
    assert len(model.requests) == PROVIDER_REATTEMPTS + 1
    assert lost.final is raised.value and raised.value.kind == "rate_limit"
    assert str(raised.value) == (
        f"lost to the provider after {PROVIDER_REATTEMPTS + 1} tries of this attempt (not a"
        " check failure): the visitor's call (scripted/fake): HTTP 429: slow down")


async def test_a_request_the_provider_refused_is_lost_without_asking_again():
    model = ScriptedModel(ProviderError("refused", "HTTP 400: bad request"), say("never"))
    with losses() as lost, pytest.raises(LostCall):
        await AskedAgain(model, "judge").complete([])
    assert len(model.requests) == 1 and lost.final is not None and lost.final.tries == 1
    assert "after 1 try of this attempt" in str(lost.final)


async def test_a_call_the_guard_refused_is_not_the_providers_loss():
    model = ScriptedModel(NotCalled("cost_cap", "cost cap reached"), say("never"))
    with losses() as lost, pytest.raises(NotCalled):
        await AskedAgain(model, "judge").complete([])
    assert len(model.requests) == 1 and lost.final is None and lost.asked_again == []
