"""The wire transport against a real HTTP server on 127.0.0.1: its one retry policy, and
completions read as replies."""

import time

import pytest

import app.chat.retry as retry
from app.chat.models import ModelCallError
from app.chat.openai_wire import OpenAICompatModel, reply_from_openai
from app.chat.retry import ProviderError
from tests.fake_openai import completion, fake_openai_server

OK = (200, completion("fine"))


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(retry, "RETRY_WAIT_MIN_S", 0.01)
    monkeypatch.setattr(retry, "RETRY_WAIT_MAX_S", 0.02)


def model(base, retries=2, timeout_s=5.0):
    return OpenAICompatModel("openai/fake", api_base=base, api_key="sk-x", timeout_s=timeout_s,
                             retries=retries)


def script(*answers):
    queue = list(answers)
    return lambda body: queue.pop(0) if len(queue) > 1 else queue[0]


async def test_retry_after_is_honoured():
    seen = []
    handler = script((429, {"error": {"message": "slow down"}}, {"Retry-After": "0.4"}), OK)
    with fake_openai_server(lambda b: (seen.append(time.perf_counter()), handler(b))[1]) \
            as (base, received):
        reply = await model(base).complete([{"role": "user", "content": "hi"}])
    assert reply.content == "fine" and len(received) == 2
    assert seen[1] - seen[0] >= 0.38


async def test_server_errors_are_retried_then_reported():
    with fake_openai_server(lambda b: (503, {"error": {"message": "overloaded"}})) \
            as (base, received):
        with pytest.raises(ProviderError) as exc:
            await model(base, retries=2).complete([{"role": "user", "content": "hi"}])
    assert len(received) == 3 and exc.value.kind == "server"
    assert "HTTP 503: overloaded" in str(exc.value)


@pytest.mark.parametrize(("answer", "kind"), [
    ((400, {"error": {"message": "bad tool schema"}}), "refused"),
    ((401, {"error": {"message": "bad key"}}), "refused"),
    ((200, "this is not json"), "unreadable"),
    ((200, {"choices": []}), "unreadable"),
    ((200, {"choices": [{"message": "not-a-dict"}]}), "unreadable"),  # an odd shape, no crash
    ((200, {"choices": [{"message": {"content": ["a", "list"]}}]}), "unreadable"),
])
async def test_refusals_and_unreadable_bodies_are_not_retried(answer, kind):
    with fake_openai_server(lambda b: answer) as (base, received):
        with pytest.raises(ProviderError) as exc:
            await model(base).complete([{"role": "user", "content": "hi"}])
    assert len(received) == 1 and exc.value.kind == kind


async def test_a_hanging_server_times_out_and_is_retried():
    with fake_openai_server(lambda b: (2.0, completion("late"))) as (base, received):
        with pytest.raises(ProviderError) as exc:
            await model(base, retries=1, timeout_s=0.3).complete([{"role": "user",
                                                                   "content": "hi"}])
        assert exc.value.kind == "timeout" and len(received) == 2


async def test_a_refused_connection_is_a_connection_failure():
    from app.serving import free_port

    with pytest.raises(ProviderError) as exc:
        await model(f"http://127.0.0.1:{free_port()}/v1", retries=1).complete(
            [{"role": "user", "content": "hi"}])
    assert exc.value.kind == "connection"


async def test_the_key_is_sent_but_never_shown():
    with fake_openai_server(lambda b: OK) as (base, received):
        m = model(base)
        await m.complete([{"role": "user", "content": "hi"}], temperature=0)
    assert received[0]["model"] == "fake" and received[0]["temperature"] == 0
    assert "sk-x" not in repr(m)


def test_reply_from_openai_reads_content_tool_calls_and_usage():
    reply = reply_from_openai(completion(None, [
        {"id": "c1", "type": "function",
         "function": {"name": "search_catalog", "arguments": '{"query": "laser"}'}}]))
    assert reply.tool_calls[0].name == "search_catalog"
    assert reply.tool_calls[0].arguments == '{"query": "laser"}'
    assert reply.usage.prompt_tokens == 7
    with pytest.raises(ModelCallError, match="no choices"):
        reply_from_openai({"choices": []})


@pytest.mark.parametrize("finish", ["length", "content_filter", "stop", None])
async def test_the_provider_s_finish_reason_is_kept_as_it_gave_it(finish):
    body = completion("cut sho")
    body["choices"][0]["finish_reason"] = finish
    with fake_openai_server(lambda b: (200, body)) as (base, _):
        reply = await model(base).complete([{"role": "user", "content": "hi"}])
    assert reply.finish_reason == finish
    assert reply.usage.cut == (finish == "length")


def test_llama_cpp_timings_are_read_and_others_give_zeros():
    llama = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 1812, "completion_tokens": 3},
             "timings": {"cache_n": 1801, "prompt_ms": 590.4, "predicted_ms": 210.9}}
    reply = reply_from_openai(llama)
    assert (reply.usage.cached_tokens, reply.usage.prefill_ms, reply.usage.generation_ms) == (
        1801, 590, 210)
    other = reply_from_openai({**llama, "timings": None})
    assert (other.usage.cached_tokens, other.usage.prefill_ms) == (0, 0)
