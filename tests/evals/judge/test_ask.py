import pytest

from evals.judge import JudgeInput, judge_messages
from evals.record.transcript import ToolCall


def test_only_the_exact_structured_verdict_is_read():
    from evals.judge import UnreadableVerdict, read_verdict

    assert read_verdict('{"verdict": "fail", "reason": "r"}') == (False, "r")
    for content in (None, "verdict: pass", '{"verdict": "PASS", "reason": "r"}',
                    '{"verdict": "pass"}', '{"verdict": "pass", "reason": "r", "also": 1}',
                    '["pass"]', 'The verdict is {"verdict": "pass", "reason": "r"}'):
        with pytest.raises(UnreadableVerdict):
            read_verdict(content)


def test_judge_sees_reference_pictures_conversation_reply_and_tool_calls():
    messages = judge_messages(JudgeInput(
        rubric="Is kind.", must_not="Lecture.",
        conversation=[{"role": "user", "content": "earlier"}, {"role": "user", "content": "now"}],
        reply="the reply", tool_calls=[ToolCall(name="search_manual", arguments={"q": "x"})],
        reference={"page": "/tools/form-4"}, pictures=["IMG_2041.jpg"]))
    text = messages[1]["content"]
    for part in ("/tools/form-4", "IMG_2041.jpg", "user: earlier", "the reply",
                 "search_manual", "Is kind.", "Lecture."):
        assert part in text


def test_the_prompt_hash_covers_every_part_of_the_template():
    from dataclasses import replace

    from evals.judge import MAKERSPACE, TUTORING

    assert MAKERSPACE.hash() != TUTORING.hash()
    assert replace(MAKERSPACE, user=MAKERSPACE.user + " ").hash() != MAKERSPACE.hash()
    assert replace(MAKERSPACE, system=MAKERSPACE.system + " ").hash() != MAKERSPACE.hash()
    tutoring = judge_messages(JudgeInput("r", None, [], "x", [], {}, []), TUTORING)
    assert "maths tutoring" in tutoring[0]["content"] and "Tool calls" not in \
        tutoring[1]["content"]
