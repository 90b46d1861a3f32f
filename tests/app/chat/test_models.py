import pytest

from app.chat.models import LiteLLMModel, ModelCallError, model_for_job
from app.chat.openai_wire import reply_from_openai
from app.settings import Settings
from tests.fake_openai import completion, fake_openai_server


def test_reply_from_openai_reads_content_tool_calls_and_usage():
    reply = reply_from_openai(completion(None, [
        {"id": "c1", "type": "function",
         "function": {"name": "search_catalog", "arguments": '{"query": "laser"}'}}]))
    assert reply.tool_calls[0].name == "search_catalog"
    assert reply.tool_calls[0].arguments == '{"query": "laser"}'
    assert reply.usage.prompt_tokens == 7
    with pytest.raises(ModelCallError, match="no choices"):
        reply_from_openai({"choices": []})


def test_local_default_without_a_running_server_is_a_clear_error():
    with pytest.raises(ModelCallError, match="no model configured"):
        model_for_job(Settings(), "chat")
    with pytest.raises(ValueError, match="unknown model job 'chef'"):
        Settings().model_for("chef")


async def test_litellm_model_over_real_http_retries_a_transient_error():
    calls = {"n": 0}

    def handler(body):
        calls["n"] += 1
        if calls["n"] == 1:
            return 503, {"error": {"message": "overloaded", "type": "server_error"}}
        return 200, completion("hello from the fake")

    with fake_openai_server(handler) as (base, received):
        model = LiteLLMModel("openai/fake", api_base=base, api_key="sk-secret-123",
                             timeout_s=10, retries=2)
        reply = await model.complete([{"role": "user", "content": "hi"}], temperature=0)
    assert reply.content == "hello from the fake"
    assert calls["n"] == 2
    assert received[-1]["temperature"] == 0
    assert "sk-secret-123" not in repr(model)


async def test_litellm_model_gives_up_on_a_client_error_without_retrying():
    def handler(body):
        return 400, {"error": {"message": "bad request", "type": "invalid_request_error"}}

    with fake_openai_server(handler) as (base, received):
        model = LiteLLMModel("openai/fake", api_base=base, api_key="k", timeout_s=10, retries=2)
        with pytest.raises(ModelCallError, match="openai/fake"):
            await model.complete([{"role": "user", "content": "hi"}])
    assert len(received) == 1


def test_a_provider_key_picks_that_providers_default(monkeypatch):
    from app.localmodel import uses_local_model

    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    assert Settings().model_for("chat") == "local"
    assert uses_local_model(Settings())
    assert not uses_local_model(Settings(), "openai/gpt-4.1-mini")
    assert not uses_local_model(Settings(local_model_url="http://127.0.0.1:9/v1"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert Settings().model_for("judge") == "openai/gpt-4.1-mini"
    assert Settings(model_chat="anthropic/claude-x").model_for("chat") == "anthropic/claude-x"


async def test_model_temperature_applies_when_a_call_names_none(tmp_path):
    settings = Settings(data_dir=tmp_path, model_temperature=0.0, model_chat="openai/fake")
    with fake_openai_server(lambda body: (200, completion("ok"))) as (base, received):
        model = model_for_job(settings.model_copy(update={"model_api_base": base}), "chat")
        await model.complete([{"role": "user", "content": "hi"}])
        await model.complete([{"role": "user", "content": "hi"}], temperature=0.7)
        plain = model_for_job(settings.model_copy(update={"model_api_base": base,
                                                          "model_temperature": None}), "chat")
        await plain.complete([{"role": "user", "content": "hi"}])
    assert received[0]["temperature"] == 0 and received[1]["temperature"] == 0.7
    assert "temperature" not in received[2]  # unset: the provider's own default


def test_llama_cpp_timings_are_read_and_others_give_zeros():
    llama = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 1812, "completion_tokens": 3},
             "timings": {"cache_n": 1801, "prompt_ms": 590.4, "predicted_ms": 210.9}}
    reply = reply_from_openai(llama)
    assert (reply.usage.cached_tokens, reply.usage.prefill_ms, reply.usage.generation_ms) == (
        1801, 590, 210)
    other = reply_from_openai({**llama, "timings": None})
    assert (other.usage.cached_tokens, other.usage.prefill_ms) == (0, 0)
