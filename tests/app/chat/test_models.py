"""Model calls by job: model_for_job, and the litellm transport over real HTTP."""

import pytest

from app.chat.models import LiteLLMModel, ModelCallError, model_for_job
from app.settings import Settings
from tests.fake_openai import completion, fake_openai_server


def test_local_default_without_a_running_server_is_a_clear_error():
    with pytest.raises(ModelCallError, match="no model configured"):
        model_for_job(Settings(), "chat")
    with pytest.raises(ValueError, match="unknown model job 'chef'"):
        Settings().model_for("chef")


def test_the_local_model_is_pinned_only_when_its_prefix_folder_is_known(tmp_path):
    from app.chat.models import model_for_job
    from app.settings import Settings

    plain = Settings(data_dir=tmp_path, local_model_url="http://127.0.0.1:1/v1")
    cached = plain.model_copy(update={"local_prefix_cache": str(tmp_path),
                                      "local_model_parallel": 2})
    off = cached.model_copy(update={"local_prefix_cache_mb": 0})
    drafted = cached.model_copy(update={"local_model_speculative": "draft"})
    assert type(model_for_job(plain, "chat")).__name__ == "OpenAICompatModel"
    assert type(model_for_job(drafted, "chat")).__name__ == "OpenAICompatModel"
    assert type(model_for_job(cached, "chat")).__name__ == "PinnedModel"
    assert type(model_for_job(off, "chat")).__name__ == "OpenAICompatModel"
    judge = model_for_job(cached, "judge")
    assert judge._pool is model_for_job(cached, "chat")._pool  # one pool per server


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


TOOLS = [{"type": "function", "function": {"name": n, "description": "d", "parameters": {}}}
         for n in ("search_catalog", "get_unit_status")]


async def test_hosted_provider_responses_pass_through_untouched():
    text = '{"name": "search_catalog", "arguments": {"query": "laser"}}'
    with fake_openai_server(lambda body: (200, completion(text))) as (base, _):
        hosted = LiteLLMModel("openai/fake", api_base=base, api_key="k", timeout_s=10,
                              retries=0)
        local = LiteLLMModel("openai/fake", api_base=base, api_key="k", timeout_s=10,
                             retries=0, tool_calls_in_content=True, max_tokens=64)
        as_hosted = await hosted.complete([{"role": "user", "content": "x"}], TOOLS)
        as_local = await local.complete([{"role": "user", "content": "x"}], TOOLS)
    assert as_hosted.content == text and as_hosted.tool_calls == []
    assert [c.name for c in as_local.tool_calls] == ["search_catalog"]


async def test_litellm_keeps_the_provider_s_finish_reason():
    for finish in ("length", "content_filter"):
        body = completion("cut sho")
        body["choices"][0]["finish_reason"] = finish
        with fake_openai_server(lambda b, body=body: (200, body)) as (base, _):
            model = LiteLLMModel("openai/fake", api_base=base, api_key="k", timeout_s=10,
                                 retries=0)
            reply = await model.complete([{"role": "user", "content": "x"}])
        assert reply.finish_reason == finish and reply.usage.cut == (finish == "length")


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


def test_the_embedded_model_is_the_same_model_before_and_after_it_is_started(tmp_path):
    # A plan made without starting it (impact, a Ray driver) names the model a run started:
    # its file, never the address it happens to have.
    from app.localmodel.assemble import DEFAULT_LOCAL_MODEL, MODELS

    spec = MODELS[DEFAULT_LOCAL_MODEL]
    unstarted = [Settings(data_dir=tmp_path, local_model_url=url)
                 for url in ("http://127.0.0.1:9/v1", "http://on-workers.invalid/v1")]
    started = Settings(data_dir=tmp_path, local_model_url="http://127.0.0.1:40123/v1",
                       local_model_sha=spec.identity)
    identities = [model_for_job(s, "chat", "local").identity() for s in [*unstarted, started]]
    assert identities[0] == identities[1] == identities[2]
    assert identities[0]["file_sha256"] == spec.identity and "api_base" not in identities[0]
