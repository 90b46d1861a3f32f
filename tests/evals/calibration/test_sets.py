import asyncio
import json

import pytest

from app.chat.models import ModelCallError
from app.chat.reply import ModelReply
from evals.calibration.calibrate import CalibrationError, calibrate
from evals.calibration.sets import MAKERSPACE_SET, load_set, rate
from evals.judge.trust import MIN_ITEMS, MIN_KAPPA
from evals.load.cases import load_cases
from tests.evals.helpers import verdict
from tests.fakes import ScriptedModel


def test_the_shipped_calibration_set_covers_every_judged_case_both_ways():
    cases = load_cases()
    items = load_set(cases)
    assert len(items) >= MIN_ITEMS
    judged = {c.id for c in cases if c.judged}
    assert judged
    for case_id in judged:
        labels = {i.reply.label for i in items if i.case.id == case_id}
        assert labels == {"pass", "fail"}, case_id


def test_calibrating_on_the_set_with_a_scripted_judge(tmp_path):
    items = load_set(load_cases())
    # A judge that agrees with the team on every reply but the first.
    replies = [ModelReply(content=json.dumps({
        "verdict": ("fail" if i.reply.label == "pass" else "pass") if n == 0 else i.reply.label,
        "reason": "r"})) for n, i in enumerate(items)]
    judge = ScriptedModel(*replies)
    rated, labels = asyncio.run(rate(items, judge, concurrency=1))
    result = calibrate(rated, labels)
    assert result.rated == len(items) and len(result.disagreements) == 1
    assert result.kappa is not None and result.kappa > MIN_KAPPA
    # the judge saw the case's rubric and the reply as data
    prompt = judge.requests[0]["messages"][1]["content"]
    assert items[0].case.rubric.split()[0] in prompt and "<<<DATA" in prompt


def test_a_bad_calibration_file_names_file_and_line(tmp_path):
    bad = tmp_path / "set.yaml"
    bad.write_text("- id: a\n  case: no-such-case\n  reply: r\n  label: pass\n")
    with pytest.raises(CalibrationError, match="set.yaml:1: 'no-such-case' is not a judged"):
        load_set(load_cases(), bad)
    assert MAKERSPACE_SET.exists()


class Waiting(ScriptedModel):
    """A scripted model that waits for its answer, as one over the network does."""

    async def complete(self, messages, tools=None, **kw):
        await asyncio.sleep(0)
        return await super().complete(messages, tools, **kw)


def test_a_failed_call_is_left_out_or_raised_when_strict():
    items = load_set(load_cases())[:3]
    failing = [verdict("pass"), ModelCallError("HTTP 401: bad key"), verdict("fail")]
    rated, _ = asyncio.run(rate(items, ScriptedModel(*failing), concurrency=1))
    assert [r.judge for r in rated] == ["pass", None, "fail"]
    assert rated[1].reason == "HTTP 401: bad key"
    many = load_set(load_cases())[:10]
    judge = Waiting(*failing, *[verdict("pass")] * 7)
    with pytest.raises(ModelCallError, match="bad key"):
        asyncio.run(rate(many, judge, concurrency=1, strict=True))
    assert len(judge.requests) < len(many)  # stopped at the failure, the rest cancelled
    unreadable = ScriptedModel(ModelReply(content="pass"), verdict("pass"), verdict("fail"))
    rated, _ = asyncio.run(rate(items, unreadable, concurrency=1, strict=True))
    assert [r.judge for r in rated] == [None, "pass", "fail"]  # an unreadable verdict: left out
