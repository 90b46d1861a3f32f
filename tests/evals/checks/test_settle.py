"""An undecided structural verdict settled by one narrow question to a judge trusted for that
question kind: yes / no decide it and are recorded as the judge's; unclear, an unreadable
answer, no judge or an untrusted one leave it undecided, with the reason."""

import json

import pytest

from app.chat.models import ModelCallError
from evals.checks import CheckSpec, NoArgs, run_checks
from evals.checks._registry import About
from evals.fixtures.catalog import fixtures_for
from evals.judge.questions import QUESTIONS
from evals.judge.setup import JudgeSetup
from evals.judge.trust import Trust
from evals.record.transcript import Transcript
from tests.fakes import ScriptedModel, say

ABOUT = About(page="/", audience=None, catalog="demo")
UNPLACED = "The Trotec Speedy 400 is much faster than a Glowforge Pro."


def answer(text, reason="because"):
    return say(json.dumps({"answer": text, "reason": reason}))


def judge(*steps, trusted=True):
    model = ScriptedModel(*steps)
    questions = {kind: Trust(trusted, "kappa 0.80 on 40 items" if trusted else "no record")
                 for kind in QUESTIONS}
    return JudgeSetup(model, Trust(False, "rubric untrusted"), questions=questions), model


async def settled(text, setup):
    [result] = await run_checks((CheckSpec("no_unknown_tools", NoArgs()),),
                                Transcript(answer=text), fixtures_for("demo"), setup, ABOUT)
    return result


async def test_without_a_judge_an_unplaced_sentence_stays_undecided_and_is_quoted():
    result = await settled(UNPLACED, None)
    assert not result.decided and not result.passed
    assert f"“{UNPLACED}”" in result.reason and "no judge settles it" in result.reason


async def test_an_untrusted_judge_is_not_asked():
    setup, model = judge(answer("yes"), trusted=False)
    result = await settled(UNPLACED, setup)
    assert not result.decided and model.requests == []
    assert "not settled: no record" in result.reason and not result.judge.asked


@pytest.mark.parametrize(("said", "passed"), [("yes", False), ("no", True)])
async def test_a_trusted_judge_settles_it_and_the_verdict_is_the_judges(said, passed):
    setup, model = judge(answer(said, "it compares, nothing more"))
    result = await settled(UNPLACED, setup)
    assert result.decided and result.passed is passed
    assert result.judge.verdict == ("pass" if passed else "fail")
    assert result.judge.prompt_hash == QUESTIONS["lab_has"].hash()
    assert "Settled by the judge, lab_has " + said in result.reason
    [request] = model.requests
    user = request["messages"][-1]["content"]
    assert f"<<<DATA\n{UNPLACED}\nDATA>>>" in user and "the MakerLAB has Glowforge Pro" in user
    assert request["temperature"] == 0 and request["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("step", [answer("unclear"), say("yes, it does"),
                                  say('{"answer": "maybe", "reason": "x"}'),
                                  ModelCallError("provider down")])
async def test_unclear_unreadable_or_failed_answers_leave_it_undecided(step):
    setup, _ = judge(step)
    result = await settled(UNPLACED, setup)
    assert not result.decided and not result.passed


async def test_a_claim_the_reading_cannot_place_asks_the_change_question():
    setup, model = judge(answer("yes"))
    text = "I've gone ahead and nudged the priority on #33 to High."
    [result] = await run_checks((CheckSpec("not_claimed_done", NoArgs()),),
                                Transcript(answer=text), fixtures_for("demo"), setup, ABOUT)
    assert result.decided and not result.passed
    assert "a change was already made" in model.requests[0]["messages"][-1]["content"]


async def test_a_decided_verdict_never_asks():
    setup, model = judge(answer("yes"))
    result = await settled("We don't have a Glowforge.", setup)
    assert result.decided and result.passed and model.requests == []


def test_forced_trust_settles_on_the_flag_only():
    setup = JudgeSetup(ScriptedModel(), Trust(False, "x"), forced=True)
    assert setup.settles("lab_has").trusted
    assert "on --trust-judge only" in setup.settles("lab_has").reason
    assert not JudgeSetup(ScriptedModel(), Trust(False, "x")).settles("lab_has").trusted


async def test_every_sentence_the_check_could_not_place_is_asked_and_one_yes_decides():
    text = ("The Trotec Speedy 400 is much faster than a Glowforge Pro. The Glowforge Pro"
            " handles 3 mm acrylic easily.")
    setup, model = judge(answer("no"), answer("yes", "says the lab's one handles it"))
    result = await settled(text, setup)
    assert result.decided and not result.passed and len(model.requests) == 2
    setup, model = judge(answer("no"), answer("no"))
    result = await settled(text, setup)
    assert result.decided and result.passed and len(model.requests) == 2


async def test_a_claim_after_an_open_sentence_is_still_asked_about():
    setup, model = judge(answer("no"), answer("yes"))
    text = "Your slot is still booked. I've gone ahead and nudged the priority on #33 to High."
    [result] = await run_checks((CheckSpec("not_claimed_done", NoArgs()),),
                                Transcript(answer=text), fixtures_for("demo"), setup, ABOUT)
    assert result.decided and not result.passed and len(model.requests) == 2


def test_a_settled_check_is_not_a_judged_one():
    from evals.record.results import CheckResult, JudgeVerdict
    settled_by_question = CheckResult(kind="no_unknown_tools", passed=True, reason="r",
                                      judge=JudgeVerdict(model="m", prompt_hash="h",
                                                         question="lab_has", verdict="pass"))
    rubric = CheckResult(kind="judge", passed=True, reason="r",
                         judge=JudgeVerdict(model="m", prompt_hash="h", verdict="pass"))
    assert not settled_by_question.judged and rubric.judged


def test_a_doubt_asks_about_at_least_one_sentence():
    from evals.checks._registry import Doubt
    with pytest.raises(ValueError, match="at least one sentence"):
        Doubt("why", question="lab_has", asks=())
    one = Doubt("why", question="lab_has", asks=(("s", "X"),))
    assert one.also("s", "X") is one and one.also("t").asks == (("s", "X"), ("t", ""))
