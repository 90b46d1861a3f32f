"""Tool calls the embedded model writes as text, read as real tool calls."""

import json

import pytest

from app.chat.reply import ModelReply, ToolCallRequest, Usage
from app.chat.text_tool_calls import adapt

TOOLS = [{"type": "function", "function": {"name": n, "description": "d", "parameters": {}}}
         for n in ("search_catalog", "get_unit_status")]


def reply(content):
    return adapt(ModelReply(content=content, usage=Usage(5, 5)), TOOLS)


# Raw outputs as the local model wrote them.
@pytest.mark.parametrize("content", [
    '```json\n{"name": "search_catalog", "arguments": {"query": "3mm acrylic"}}\n```',
    '{"name": "search_catalog", "arguments": {"query": "3mm acrylic"}}',
    '<tools> {"name": "search_catalog", "arguments": {"query": "3mm acrylic"}} </tools>',
    '<tool_call>\n{"name": "search_catalog", "arguments": "{\\"query\\": \\"3mm acrylic\\"}"}'
    '\n</tool_call>',
    'Let me look that up.\n```json\n{"name": "search_catalog", "arguments": {"query": '
    '"3mm acrylic"}}\n```',
])
def test_a_call_written_as_text_becomes_a_tool_call(content):
    out = reply(content)
    assert out.content is None
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [
        ("search_catalog", {"query": "3mm acrylic"})]
    assert out.usage == Usage(5, 5)


def test_a_call_read_out_of_the_text_keeps_the_provider_s_finish_reason():
    written = '{"name": "search_catalog", "arguments": {"query": "laser"}}'
    out = adapt(ModelReply(content=written, finish_reason="stop"), TOOLS)
    assert out.tool_calls and out.finish_reason == "stop"


def test_calls_written_with_doubled_braces():
    # As recorded in a full run: several calls, each in doubled braces, side by side.
    out = reply('{{"name": "search_catalog", "arguments": {"query": "laser"}}} '
                '{{"name": "get_unit_status", "arguments": {"slug": "form-4"}}}')
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [
        ("search_catalog", {"query": "laser"}), ("get_unit_status", {"slug": "form-4"})]


def test_several_calls():
    out = reply('{"name": "search_catalog", "arguments": {"query": "laser"}}\n'
                '{"name": "get_unit_status", "arguments": {"slug": "form-4"}}')
    assert [c.name for c in out.tool_calls] == ["search_catalog", "get_unit_status"]
    assert len({c.id for c in out.tool_calls}) == 2


@pytest.mark.parametrize("content", [
    '```json\n{"name": "search_catalog", "arguments": {"query": \n```',  # malformed JSON
    '{"name": "launch_rocket", "arguments": {}}',                          # not a tool here
    "The Trotec Speedy 400 cuts 3 mm acrylic.",                           # a plain answer
    '```json\n{"machines": ["Form 4"]}\n```',                             # JSON, not a call
    "",
])
def test_anything_else_stays_a_plain_answer(content):
    out = reply(content)
    assert out.tool_calls == [] and out.content == content


def test_real_tool_calls_are_left_alone():
    original = ModelReply(content=None, tool_calls=[ToolCallRequest("a", "search_catalog", "{}")])
    assert adapt(original, TOOLS) is original
