"""What the call cache keeps: keys that differ exactly where the reply can (the run's blob
server one constant whatever its port), a model pinned only by a real sha256, and a kept
reply of another shape refused, never coerced."""

import json

import pytest

from app.chat.openai_wire import OpenAICompatModel
from app.chat.reply import ModelReply
from evals.execute.cache_entry import call_key, pinned, reply_from, reply_json, request_of


def test_keys_differ_exactly_where_the_reply_can():
    ident = {"model": "openai/m", "api_base": "https://x"}
    messages = [{"role": "user", "content": "hi"}]
    base = call_key(ident, request_of(messages, None, {}), 1, 1, 0)
    assert base == call_key(ident, request_of(list(messages), None, {}), 1, 1, 0)
    others = [
        call_key({**ident, "model": "openai/n"}, request_of(messages, None, {}), 1, 1, 0),
        call_key(ident, request_of([{"role": "user", "content": "hi!"}], None, {}), 1, 1, 0),
        call_key(ident, request_of(messages, [{"type": "function"}], {}), 1, 1, 0),
        call_key(ident, request_of(messages, None, {"temperature": 0}), 1, 1, 0),
        call_key(ident, request_of(messages, None, {"tool_choice": "auto"}), 1, 1, 0),
        call_key(ident, request_of(messages, None, {"response_format": {"type": "json"}}),
                 1, 1, 0),
        call_key(ident, request_of(messages, None, {}), 2, 1, 0),  # another repetition
        call_key(ident, request_of(messages, None, {}), 1, 2, 0),  # the retry
        call_key(ident, request_of(messages, None, {}), 1, 1, 1),  # asked twice in a sample
    ]
    assert len({base, *others}) == len(others) + 1


def test_the_run_s_blob_server_is_one_constant_in_the_keys_whatever_its_port():
    ident = {"model": "openai/m", "api_base": "https://x"}

    def asked(base, elsewhere="https://example.org/a.pdf"):
        found = {"passages": [{"ref": "p1", "url": f"{base}/manuals/form-4.pdf#page=3"}],
                 "see": elsewhere}
        return [{"role": "user", "content": "How long do I wash prints?"},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(found)}]

    one, two = "http://127.0.0.1:8766/blobs", "http://127.0.0.1:40123/blobs"
    sent = asked(one)
    key = call_key(ident, request_of(sent, None, {}, one), 1, 1, 0)
    assert key == call_key(ident, request_of(asked(two), None, {}, two), 1, 1, 0)
    assert sent == asked(one)  # what the model is sent is not changed
    others = [
        # another real address still changes the key
        call_key(ident, request_of(asked(one, "https://example.org/b.pdf"), None, {}, one),
                 1, 1, 0),
        # an address on another port than the run's own is not the run's blob server
        call_key(ident, request_of(asked(two), None, {}, one), 1, 1, 0),
        call_key(ident, request_of(sent, None, {}), 1, 1, 0),  # no blob server known
    ]
    assert len({key, *others}) == len(others) + 1


def test_only_a_real_sha256_pins_a_model():
    assert pinned({"file_sha256": "a" * 64}) and pinned({"file_sha256": "0F" * 32})
    # An unpinned local model is known by its name (ModelSpec.identity): never pinned.
    for sha in ("qwen2.5-coder-1.5b-instruct", "a" * 63, "a" * 65, "g" * 64, "", None, 5):
        assert not pinned({"file_sha256": sha}), sha
    assert not pinned({"model": "openai/gpt-4o", "api_base": "https://x"})

    def local(sha):
        return OpenAICompatModel("openai/qwen", api_base="http://127.0.0.1:1/v1",
                                 api_key="local-no-key", timeout_s=5, retries=0,
                                 file_sha256=sha)

    assert pinned(local("c" * 64).identity())
    assert not pinned(local("qwen2.5-coder-1.5b-instruct").identity())


@pytest.mark.parametrize(("change", "says"), [
    ({"tool_calls": [{"id": None, "name": "read_page", "arguments": "{}"}]},
     "a tool call's id is not text"),
    ({"tool_calls": [{"id": "c1", "name": "read_page", "arguments": {"url": "https://x"}}]},
     "a tool call's arguments is not text"),
    ({"usage": {"prompt_tokens": 1.9, "completion_tokens": 3, "cut": 0, "cached_tokens": 0,
                "prefill_ms": 0, "generation_ms": 0}}, "prompt_tokens is not a whole number"),
    ({"usage": {"prompt_tokens": 1, "completion_tokens": "3", "cut": 0, "cached_tokens": 0,
                "prefill_ms": 0, "generation_ms": 0}}, "completion_tokens is not a whole number"),
    ({"usage": {"prompt_tokens": 1, "completion_tokens": 3, "cut": True, "cached_tokens": 0,
                "prefill_ms": 0, "generation_ms": 0}}, "cut is not a whole number"),
])
def test_a_stored_reply_of_another_shape_is_a_miss_never_coerced(change, says):
    kept = reply_json(ModelReply(content="x", finish_reason="stop"))
    with pytest.raises(ValueError, match=f"not a stored reply: {says}"):
        reply_from({**kept, **change})


def test_a_stored_reply_of_another_finish_reason_shape_is_refused():
    kept = reply_json(ModelReply(content="x", finish_reason="content_filter"))
    assert kept["finish_reason"] == "content_filter"
    assert reply_from({**kept, "finish_reason": None}).finish_reason is None
    with pytest.raises(ValueError, match="finish_reason is not text"):
        reply_from({**kept, "finish_reason": 5})
