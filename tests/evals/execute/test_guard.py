"""Faults: rate limits, a dead endpoint, a provider storm, the cost cap, a stop."""

import asyncio
import random

import pytest

from app.chat.openai_wire import OpenAICompatModel
from app.chat.reply import ModelReply, Usage
from evals.execute.guard import AdaptiveLimit, CallGuard, Spend, prompt_tokens_bound
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
    # gpt-4o's worst case here is about $0.18 (16,384 output tokens and a ~7,000-byte
    # prompt): one call fits under $0.30, and after it spent $0.14 a second does not.
    model = ScriptedModel(say("We don't have that.", tokens=(1000, 14000)), repeat=True,
                          model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", model)], concurrency=1,
                                 max_cost_usd=0.30)
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

    cases = [c for c in load_cases() if c.judged and c.file == "safety-and-care.yaml"][:3]
    assert len(cases) == 3
    chat = ScriptedModel(say("Please talk to lab staff first."), repeat=True)  # no price
    judge = ScriptedModel(ModelReply(content=json.dumps({"verdict": "pass", "reason": "ok"}),
                                     usage=Usage(1000, 14000)), repeat=True,
                          model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", chat)], concurrency=1,
                                 judge=JudgeSetup(judge, Trust(True, "test")),
                                 max_cost_usd=0.30)
    statuses = [r.status for r in results["v"]]
    # The judge's first call spent $0.14: the second case's (unpriced) chat call was made,
    # its judge's call could no longer fit, and from then on no call is made.
    assert statuses == ["PASS", "ERROR", "SKIPPED"], statuses
    refused = results["v"][1].attempts[0].checks[-1]
    assert refused.error and "cost cap reached" in refused.reason
    assert results["v"][2].skipped_reason.startswith("cost cap reached")
    assert len(judge.requests) == 1 and len(chat.requests) == 2


async def test_a_judge_call_refused_by_the_cap_is_an_error_that_says_so(env):
    import json

    from app.chat.reply import ModelReply, Usage
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust

    cases = [c for c in load_cases() if c.judged and c.file == "safety-and-care.yaml"][:2]
    # the chat model's first answer spends the cap before the judge is asked
    chat = ScriptedModel(say("Please talk to lab staff first.", tokens=(1000, 14000)),
                         repeat=True, model_id="openai/gpt-4o")
    judge = ScriptedModel(ModelReply(content=json.dumps({"verdict": "pass", "reason": "ok"}),
                                     usage=Usage(10, 5)), repeat=True, model_id="openai/gpt-4o")
    results = await run_variants(env, cases, [Variant("v", chat)], concurrency=2,
                                 judge=JudgeSetup(judge, Trust(True, "test")),
                                 max_cost_usd=0.30)
    judged = [a.checks[-1] for r in results["v"] for a in r.attempts
              if a.checks and a.checks[-1].judge is not None]
    refused = [c for c in judged if "cost cap reached" in c.reason]
    assert refused and all(c.error for c in refused)
    assert len(judge.requests) < len(cases)


class Slow(ScriptedModel):
    """A priced model whose calls take a while, so that several are in flight at once."""

    async def complete(self, messages, tools=None, **kw):
        self.requests.append({"messages": messages, "tools": tools})
        await asyncio.sleep(0.05)
        # 8,000 output tokens: half of gpt-4o-mini's 16,384; fewer prompt tokens than bytes
        return ModelReply(content="We don't have that machine here.", usage=Usage(2000, 8000))


@pytest.mark.parametrize("cap", [0.001, 0.03])
async def test_the_cost_cap_holds_with_calls_in_flight(env, cap):
    cases = select(load_cases(), HONEST) * 3
    cases = [c.__class__(**{**c.__dict__, "id": f"{c.id}-{i}"}) for i, c in enumerate(cases)]
    model = Slow(model_id="openai/gpt-4o-mini")  # $0.0051 a call, at most about $0.011
    results = await run_variants(env, cases, [Variant("v", model)], concurrency=4,
                                 max_cost_usd=cap)
    spent = sum(a.cost_usd or 0 for r in results["v"] for a in r.attempts)
    assert spent <= cap, (spent, len(model.requests))
    assert len(model.requests) == (0 if cap < 0.011 else 4)  # every call that fits, no more
    skipped = [r for r in results["v"] if r.status == "SKIPPED"]
    assert len(skipped) == len(cases) - len(model.requests)
    assert all(r.skipped_reason.startswith("cost cap reached") for r in skipped)


def test_a_reservation_waits_for_the_calls_in_flight_and_is_refused_when_none_is_left():
    async def go():
        spend, stop = Spend(0.01), asyncio.Event()
        assert await spend.reserve(0.006, stop)
        second = asyncio.create_task(spend.reserve(0.006, stop))
        await asyncio.sleep(0.01)
        assert not second.done()  # 0.006 reserved: a second 0.006 would pass 0.01
        spend.settle(0.006, 0.001)  # the first call cost less than its worst case
        assert await asyncio.wait_for(second, 1) and spend.reserved_usd == 0.006
        spend.settle(0.006, 0.005)
        assert spend.cost_usd == 0.006 and not spend.cap_reached
        assert not await spend.reserve(0.006, stop)  # nothing in flight will free room
        assert spend.cap_reached
        assert await spend.reserve(0.004, stop)  # a smaller call still fits
    asyncio.run(go())


def test_a_reservation_waiting_for_room_gives_up_when_the_run_stops():
    async def go():
        spend, stop = Spend(0.01), asyncio.Event()
        assert await spend.reserve(0.008, stop)
        waiting = asyncio.create_task(spend.reserve(0.008, stop))
        await asyncio.sleep(0.01)
        stop.set()
        assert await asyncio.wait_for(waiting, 1) is False
    asyncio.run(go())


def test_the_prompt_bound_covers_every_byte_and_each_pdf_page():
    import base64

    text = [{"role": "user", "content": "héllo"}]
    assert prompt_tokens_bound(text, None) >= len("héllo".encode())
    pdf = b"%PDF-1.4 /Type /Pages /Type /Page x /Type /Page y"
    part = {"type": "file", "file": {"file_data": "data:application/pdf;base64,"
                                                  + base64.b64encode(pdf).decode()}}
    with_pdf = [{"role": "user", "content": [part]}]
    assert prompt_tokens_bound(with_pdf, None) >= 2 * 3000  # two pages, not the /Pages tree
    part["file"]["file_data"] = "data:application/pdf;base64,abc"  # unreadable: one page
    assert 3000 <= prompt_tokens_bound(with_pdf, None) < 2 * 3000


async def test_a_priced_model_with_no_output_limit_is_never_called_under_a_cap():
    model = ScriptedModel(say("x"), model_id="openai/gpt-4o")
    guard = CallGuard(model, 1, max_cost_usd=1.0)
    guard.worst_case_usd = lambda messages, tools: float("inf")  # no limit in the metadata
    with pytest.raises(Exception, match="no output token limit for openai/gpt-4o"):
        await guard.complete([{"role": "user", "content": "hi"}])
    assert model.requests == []


async def test_one_spend_keeps_each_jobs_part_and_counts_the_calls_the_cap_refused():
    spend = Spend(1.0)
    chat = CallGuard(ScriptedModel(say("x", (1000, 100)), repeat=True,
                                   model_id="openai/gpt-4o-mini"), 1, spend=spend)
    judge = CallGuard(ScriptedModel(say("y", (1000, 100)), repeat=True,
                                    model_id="openai/gpt-4o-mini"), 1, spend=spend, job="judge")
    await chat.complete([{"role": "user", "content": "hi"}])
    await judge.complete([{"role": "user", "content": "hi"}])
    await judge.complete([{"role": "user", "content": "hi"}])
    assert spend.parts["chat"] > 0
    assert spend.parts["judge"] == pytest.approx(2 * spend.parts["chat"])
    assert spend.cost_usd == pytest.approx(3 * spend.parts["chat"])
    assert spend.said().startswith(f"${spend.cost_usd:.4f} (chat $")
    spend.max_cost_usd = spend.cost_usd  # no room left: the next call is refused, and counted
    with pytest.raises(Exception, match="cost cap reached"):
        await chat.complete([{"role": "user", "content": "hi"}])
    assert spend.calls_refused == 1 and spend.cost_usd == pytest.approx(
        3 * spend.parts["chat"])
