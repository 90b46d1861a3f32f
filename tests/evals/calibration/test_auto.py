"""A judge's first calibration: which prompts a run asks its judge under, which of them have no
record, and calibrating the base prompt on the makerspace set (saved, or nothing saved when
the judge's calls fail); a pack's prompt is never calibrated on it."""

import asyncio
import json

import pytest

from app.chat.models import ModelCallError
from app.chat.reply import ModelReply
from evals.calibration.auto import calibrate_first, prompts_asked, unrecorded
from evals.calibration.sets import load_set
from evals.judge import MAKERSPACE
from evals.judge.setup import PackPrompt
from evals.judge.trust import load_records, trust
from evals.load.cases import load_cases
from evals.load.selection import select_items
from evals.record.fingerprint import Selection
from tests.evals.helpers import team_verdict, verdict
from tests.fakes import ScriptedModel

PACK = PackPrompt("safety", "kind", "kind replies", "Replies kindly.", None)


def agreeing(messages, tools):
    return ModelReply(content=json.dumps({"verdict": team_verdict(messages), "reason": "r"}))


def test_a_run_asks_its_judge_under_the_packs_prompt_and_the_base_for_what_it_does_not_rate():
    items = select_items(Selection())
    cases = [i for i in items if i.judged and i.single_turn]
    scenarios = [i for i in items if i.judged and not i.single_turn]
    plain = [i for i in items if not i.judged]
    assert cases and scenarios and plain
    assert prompts_asked(plain, PACK) == [] == prompts_asked(plain, None)
    assert prompts_asked(cases, None) == [None]
    assert prompts_asked(cases, PACK) == [PACK]
    assert prompts_asked(scenarios, PACK) == [None]  # a pack rates cases only
    assert prompts_asked(items, PACK) == [PACK, None]


def test_a_calibration_saves_the_base_prompts_record_and_the_judge_earns_trust(tmp_path):
    path = tmp_path / "judges.yaml"
    labelled = load_set(load_cases())
    judge = ScriptedModel(agreeing, repeat=True)
    assert unrecorded("scripted/fake", [PACK, None], path) == [PACK, None]
    record, now = asyncio.run(calibrate_first(judge, labelled, 4, path))
    assert (record.pack, record.prompt_hash) == (None, MAKERSPACE.hash())
    assert record.n == len(labelled) and record.agreement == 1.0 and record.kappa == 1.0
    assert now.trusted and load_records(path) == [record]
    assert len(judge.requests) == len(labelled)
    # each reply rated under its own case's rubric, the one its label was given under
    assert not any("Replies kindly." in r["messages"][1]["content"] for r in judge.requests)
    assert unrecorded("scripted/fake", [PACK, None], path) == [PACK]  # the pack is not it
    assert not trust("scripted/fake", PACK.hash(MAKERSPACE.hash()), path,
                     pack=PACK.ref).trusted


def test_a_judge_that_agrees_by_chance_only_is_recorded_but_does_not_decide(tmp_path):
    path = tmp_path / "judges.yaml"
    record, now = asyncio.run(calibrate_first(ScriptedModel(verdict("pass"), repeat=True),
                                              load_set(load_cases()), 4, path))
    assert record.kappa == 0.0 and record.pack is None and not now.trusted
    assert unrecorded("scripted/fake", [None], path) == []  # a bad record is a record


def test_a_judge_whose_calls_fail_is_not_recorded(tmp_path):
    path = tmp_path / "judges.yaml"
    judge = ScriptedModel(verdict("pass"), ModelCallError("HTTP 401: bad key"))
    with pytest.raises(ModelCallError, match="bad key"):
        asyncio.run(calibrate_first(judge, load_set(load_cases()), 1, path))
    assert not path.exists()
