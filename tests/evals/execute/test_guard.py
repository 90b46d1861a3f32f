"""Faults: rate limits, a dead endpoint, a provider storm, the cost cap, a stop."""

import asyncio
import random

import pytest

from app.chat.openai_wire import OpenAICompatModel
from evals.execute.guard import AdaptiveLimit
from evals.execute.runner import Variant, run_suite, run_variants
from evals.load.cases import load_cases
from tests.evals.helpers import select
from tests.fake_openai import completion, fake_openai_server
from tests.fakes import ScriptedModel, say

HONEST = "honest-absence"


def wire(base, retries=0):
    return OpenAICompatModel("openai/fake", api_base=base, api_key="k", timeout_s=5,
                             retries=retries)


def answer(body):
    """A fault-free model: the right answer for the honest-absence cases, by prompt."""
    prompt = body["messages"][-1]["content"]
    text = "We don't have that machine here." if "page" not in prompt else \
        "We don't have a band saw, so there is no page for it."
    return 200, completion(text)


async def test_a_dead_endpoint_trips_the_breaker(env):
    from app.serving import free_port

    cases = select(load_cases(), HONEST) * 3
    cases = [c.__class__(**{**c.__dict__, "id": f"{c.id}-{i}"}) for i, c in enumerate(cases)]
    results = await run_suite(env, cases, wire(f"http://127.0.0.1:{free_port()}/v1"),
                              concurrency=2)
    assert {r.status for r in results} == {"ERROR"}
    unreachable = [r for r in results if "endpoint unreachable" in (r.attempts[0].error or "")]
    assert len(unreachable) >= len(cases) - 5 - 2  # at most the breaker's 5 and those in flight
    # not retried: nothing was called
    assert unreachable and all(len(r.attempts) == 1 for r in unreachable)


async def test_rate_limits_shrink_the_concurrency_and_retry_after_is_used(env):
    served = {"n": 0}

    def limited(body):
        served["n"] += 1
        if served["n"] <= 4:
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
        return answer(body)

    cases = select(load_cases(), HONEST)
    with fake_openai_server(limited) as (base, _):
        model = wire(base, retries=3)
        results = await run_variants(env, cases, [Variant("v", model)], concurrency=4)
    assert [r.status for r in results["v"]] == ["PASS"] * len(cases)
    assert model.on_retry is not None  # the guard listened to the model's retries


def test_the_adaptive_limit_halves_and_grows_back():
    async def go():
        limit = AdaptiveLimit(8)
        limit.shrink()
        limit.shrink()
        assert limit.size == 2 and limit.lowest == 2
        for _ in range(10):
            await limit.grow()
        assert limit.size == 8
    asyncio.run(go())


async def test_a_storm_changes_no_verdict_except_to_error(env):
    cases = select(load_cases(), HONEST)
    with fake_openai_server(answer) as (base, _):
        clean = await run_suite(env, cases, wire(base, retries=4), concurrency=4)
    rng = random.Random(7)

    def storm(body):
        roll = rng.random()
        if roll < 0.3:
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if roll < 0.4:
            return 500, {"error": {"message": "oops"}}
        return answer(body)

    with fake_openai_server(storm) as (base, received):
        stormy = await run_suite(env, cases, wire(base, retries=4), concurrency=4)
    assert len(received) > len(cases)  # the storm did hit
    for before, after in zip(clean, stormy, strict=True):
        assert after.status in (before.status, "ERROR"), after.id
        if after.status != "ERROR":
            assert len(after.attempts) == len(before.attempts)  # no storm-made FLAKY


async def test_the_cost_cap_skips_what_has_not_started(env):
    cases = select(load_cases(), HONEST)
    # a priced model id: litellm's table knows gpt-4o's price
    model = ScriptedModel(say("We don't have that.", tokens=(1000, 100)), repeat=True,
                          model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", model)], concurrency=1,
                                 max_cost_usd=0.000001)
    statuses = [r.status for r in results["v"]]
    assert statuses.count("SKIPPED") == len(cases) - 1
    skipped = [r for r in results["v"] if r.status == "SKIPPED"]
    assert skipped and all(r.skipped_reason.startswith("cost cap reached") for r in skipped)
    assert len(model.requests) == 1


async def test_a_stop_leaves_unstarted_cases_out(env):
    cases = select(load_cases(), HONEST)
    stop = asyncio.Event()

    class Stopping(ScriptedModel):
        async def complete(self, messages, tools=None, **kw):
            stop.set()  # Ctrl-C while the first case is in flight
            return say("We don't have that.")

    results = await run_variants(env, cases, [Variant("v", Stopping())], concurrency=1,
                                 stop=stop)
    assert len(results["v"]) == 1 and results["v"][0].status == "PASS"


def test_the_adaptive_limit_lets_waiters_in_first_come_first_served():
    async def go():
        limit = AdaptiveLimit(1)
        order = []

        async def user(n):
            async with limit:
                order.append(n)
                await asyncio.sleep(0)

        await asyncio.gather(*(user(n) for n in range(6)))
        assert order == list(range(6)) and limit.in_flight == 0
    asyncio.run(go())


def test_a_cancelled_waiter_hands_its_place_on():
    async def go():
        limit = AdaptiveLimit(1)
        await limit.__aenter__()
        cancelled = asyncio.create_task(limit.__aenter__())
        waiting = asyncio.create_task(limit.__aenter__())
        await asyncio.sleep(0)
        cancelled.cancel()
        await limit.__aexit__()  # the place goes to the waiter still waiting
        await asyncio.wait_for(waiting, 1)
        assert limit.in_flight == 1 and not limit._waiters
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        # granted and cancelled before it ran: the place is handed on, not lost
        third = asyncio.create_task(limit.__aenter__())
        fourth = asyncio.create_task(limit.__aenter__())
        await asyncio.sleep(0)
        await limit.__aexit__()
        third.cancel()
        await asyncio.wait_for(fourth, 1)
        assert limit.in_flight == 1
        with pytest.raises(asyncio.CancelledError):
            await third
    asyncio.run(go())


async def test_the_judges_calls_count_toward_the_cost_cap(env):
    import json

    from app.chat.reply import ModelReply, Usage
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust

    cases = [c for c in load_cases() if c.judged][:3]
    assert len(cases) == 3
    chat = ScriptedModel(say("Please talk to lab staff first."), repeat=True)  # no price
    judge = ScriptedModel(ModelReply(content=json.dumps({"verdict": "pass", "reason": "ok"}),
                                     usage=Usage(1000, 100)), repeat=True,
                          model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", chat)], concurrency=1,
                                 judge=JudgeSetup(judge, Trust(True, "test")),
                                 max_cost_usd=0.000001)
    statuses = [r.status for r in results["v"]]
    assert statuses.count("SKIPPED") == 2, statuses  # the judge's first call spent the cap
    assert all(r.skipped_reason.startswith("cost cap reached") for r in results["v"]
               if r.status == "SKIPPED")
    assert len(judge.requests) == 1 and len(chat.requests) == 1


async def test_a_judge_call_refused_by_the_cap_is_an_error_that_says_so(env):
    import json

    from app.chat.reply import ModelReply, Usage
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust

    cases = [c for c in load_cases() if c.judged][:2]
    # the chat model's first answer spends the cap before the judge is asked
    chat = ScriptedModel(say("Please talk to lab staff first.", tokens=(1000, 100)),
                         repeat=True, model_id="openai/gpt-4o")
    judge = ScriptedModel(ModelReply(content=json.dumps({"verdict": "pass", "reason": "ok"}),
                                     usage=Usage(10, 5)), repeat=True, model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", chat)], concurrency=2,
                                 judge=JudgeSetup(judge, Trust(True, "test")),
                                 max_cost_usd=0.000001)
    judged = [a.checks[-1] for r in results["v"] for a in r.attempts
              if a.checks and a.checks[-1].judge is not None]
    refused = [c for c in judged if "cost cap reached" in c.reason]
    assert refused and all(c.error for c in refused)
    assert len(judge.requests) < len(cases)
