"""An item's attempts: a pass, a flake, a failure retried once; a try lost to the provider tried
again as the same attempt (after what the provider asked), never a flake; a refusal of the guard
not tried again."""

import pytest

from app.chat.models import ModelCallError
from tests.evals.execute.scripted import BAD, GOOD, run, two_cases


@pytest.fixture
def cases(tmp_path):
    return two_cases(tmp_path)


async def test_pass_on_first_attempt(env, cases):
    result, model = await run(env, cases, GOOD)
    assert result.status == "PASS" and len(model.requests) == 1


async def test_pass_only_on_retry_is_flaky(env, cases):
    result, model = await run(env, cases, BAD, GOOD)
    assert result.status == "FLAKY" and len(result.attempts) == 2


async def test_fail_twice_is_fail_and_retries_once_only(env, cases):
    result, model = await run(env, cases, BAD, BAD, GOOD)
    assert result.status == "FAIL" and len(model.requests) == 2
    assert "does not name Trotec Speedy 400" in result.attempts[1].checks[0].reason


async def test_a_provider_error_is_error_never_fail(env, cases):
    result, _ = await run(env, cases, ModelCallError("503 after retries"),
                          ModelCallError("503 after retries"))
    assert result.status == "ERROR"
    assert "503 after retries" in result.attempts[0].error


async def test_a_provider_error_is_retried_as_the_same_attempt(env, cases):
    result, _ = await run(env, cases, ModelCallError("timeout"), GOOD)
    assert result.status == "PASS" and len(result.attempts) == 1
    assert result.attempts[0].lost_to == ["model call failed: timeout"]


async def test_an_attempt_the_provider_lost_is_never_a_flake(env, cases):
    from evals.execute.retries import PROVIDER_REATTEMPTS

    lost = [ModelCallError("503 after retries")] * (PROVIDER_REATTEMPTS + 1)
    result, model = await run(env, cases, *lost, GOOD)
    # every try of the one attempt was lost: an ERROR that says so, never a pass on retry
    assert result.status == "ERROR" and len(result.attempts) == 1
    assert len(model.requests) == PROVIDER_REATTEMPTS + 1
    error = result.attempts[0].error
    assert error.startswith(f"lost to the provider after {PROVIDER_REATTEMPTS + 1} tries")
    assert "not a check failure" in error and "503 after retries" in error


async def test_the_runners_retry_waits_what_the_provider_asked(env, cases, monkeypatch):
    import time

    import app.chat.retry as retry
    from app.chat.retry import ProviderError

    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 60.0)  # the tests' default is 5 ms

    asked: list[float] = []

    def good(messages, tools):
        asked.append(time.monotonic())
        return GOOD

    def limited(messages, tools):
        asked.append(time.monotonic())
        raise ProviderError("rate_limit", "429 slow down", status=429, retry_after_s=0.4)

    result, _ = await run(env, cases, limited, good)
    assert result.status == "PASS" and len(result.attempts) == 1
    assert asked[1] - asked[0] >= 0.4  # not a few ms later


async def test_a_failed_check_stays_a_fail_when_the_retry_errors(env, cases):
    result, _ = await run(env, cases, BAD, ModelCallError("503"), ModelCallError("503"))
    assert result.status == "FAIL"
    assert result.attempts[1].failure is not None


async def test_a_call_the_guard_refused_is_not_tried_again():
    from evals.execute.retries import with_one_retry
    from evals.record.results import Attempt

    tries = []

    async def refused(number):
        tries.append(number)
        return Attempt(error="stopped", failure="cost_cap")

    assert len(await with_one_retry(refused)) == 1 and tries == [1]


# A judge's or a simulated visitor's call lost to the provider: re-asked as the same attempt
# (the chat model is not asked again), after what the provider asked; still lost, an ERROR
# that names whose call it was, never a FLAKY or a FAIL. Against the scripted model server.

JUDGED = """
- id: judged
  prompt: "Which printer prints resin?"
  rubric: Names the Form 4.
"""
TALK = """\
- id: talk
  visitor: {who: a student, wants: a resin printer}
  opening: which printer prints resin?
  max_turns: 2
  criteria:
    - statement: Names the Form 4.
"""


def storm(lasts, answer, retry_after="0.2"):
    """A handler answering 429 (with Retry-After) to its first `lasts` requests, then
    `answer`; and the times requests came."""
    import time

    from tests.fake_openai import completion

    came: list[float] = []

    def handler(body):
        came.append(time.monotonic())
        if len(came) <= lasts:
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": retry_after}
        return 200, completion(answer)

    return handler, came


def wire(base, model_id):
    from app.chat.openai_wire import OpenAICompatModel

    # one client retry: a storm of two requests loses the call to the client's own tries
    return OpenAICompatModel(model_id, api_base=base, api_key="k", timeout_s=5, retries=1)


def judged_case(tmp_path):
    import textwrap

    from evals.load.cases import load_cases

    (tmp_path / "j.yaml").write_text(textwrap.dedent(JUDGED))
    return load_cases(tmp_path)


def judge_of(model, trusted):
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust

    return JudgeSetup(model, Trust(trusted, "scripted"), advisory=not trusted)


PASSING = '{"verdict": "pass", "reason": "it names the Form 4"}'


@pytest.mark.parametrize(("trusted", "status"), [(True, "PASS"), (False, "UNDECIDED")])
async def test_a_judge_storm_within_the_tries_changes_no_verdict(env, tmp_path, monkeypatch,
                                                                 trusted, status):
    import app.chat.retry as retry
    from evals.execute.runner import run_suite
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 60.0)  # the tests' default is 5 ms
    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    handler, came = storm(2, PASSING)
    with fake_openai_server(handler) as (base, _):
        [result] = await run_suite(env, judged_case(tmp_path), chat,
                                   judge=judge_of(wire(base, "openai/judge"), trusted))
    assert result.status == status and len(result.attempts) == 1
    assert len(chat.requests) == 1  # the judge is asked again, about the same answer
    assert len(came) == 3 and came[2] - came[1] >= 0.2  # after what the provider asked
    assert result.attempts[0].lost_to[0].startswith("the judge's call (openai/judge)")


@pytest.mark.parametrize("trusted", [True, False])
async def test_a_judge_storm_that_outlasts_the_tries_is_an_error(env, tmp_path, trusted):
    from evals.execute.retries import PROVIDER_REATTEMPTS
    from evals.execute.runner import run_suite
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    handler, came = storm(1000, PASSING, retry_after="0")
    with fake_openai_server(handler) as (base, _):
        [result] = await run_suite(env, judged_case(tmp_path), chat,
                                   judge=judge_of(wire(base, "openai/judge"), trusted))
    assert result.status == "ERROR" and len(result.attempts) == 1
    assert len(chat.requests) == 1
    assert len(came) == 2 * (PROVIDER_REATTEMPTS + 1)  # the client's 2 tries, each try
    error = result.attempts[0].error
    assert error.startswith(f"lost to the provider after {PROVIDER_REATTEMPTS + 1} tries")
    assert "the judge's call (openai/judge)" in error and "429" in error
    assert result.attempts[0].answer == "The Form 4 prints resin."  # kept for the report


async def test_a_visitor_storm_within_the_tries_changes_no_verdict(env, tmp_path, monkeypatch):
    import app.chat.retry as retry
    from evals.execute.runner import run_suite
    from tests.evals.helpers import verdict
    from tests.evals.load.helpers import item_of
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    monkeypatch.setattr(retry, "RETRY_AFTER_CAP_S", 60.0)
    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    judge = ScriptedModel(verdict("pass"), repeat=True)
    handler, came = storm(2, "Thanks, that is all. STOP")
    with fake_openai_server(handler) as (base, _):
        [result] = await run_suite(env, [item_of(tmp_path, TALK)], chat,
                                   judge=judge_of(judge, True),
                                   visitor=wire(base, "openai/visitor"))
    assert result.status == "PASS" and len(result.attempts) == 1
    assert len(chat.requests) == 1  # the conversation goes on from where the visitor was
    assert len(came) == 3 and came[2] - came[1] >= 0.2
    assert result.attempts[0].lost_to[0].startswith("the visitor's call (openai/visitor)")


async def test_a_visitor_storm_that_outlasts_the_tries_is_an_error(env, tmp_path):
    from evals.execute.retries import PROVIDER_REATTEMPTS
    from evals.execute.runner import run_suite
    from tests.evals.helpers import verdict
    from tests.evals.load.helpers import item_of
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    judge = ScriptedModel(verdict("pass"), repeat=True)
    handler, came = storm(1000, "STOP", retry_after="0")
    with fake_openai_server(handler) as (base, _):
        [result] = await run_suite(env, [item_of(tmp_path, TALK)], chat,
                                   judge=judge_of(judge, True),
                                   visitor=wire(base, "openai/visitor"))
    assert result.status == "ERROR" and len(result.attempts) == 1
    assert len(chat.requests) == 1 and judge.requests == []
    assert len(came) == 2 * (PROVIDER_REATTEMPTS + 1)
    error = result.attempts[0].error
    assert error.startswith(f"lost to the provider after {PROVIDER_REATTEMPTS + 1} tries")
    assert "the visitor's call (openai/visitor)" in error and "429" in error


@pytest.mark.parametrize("rule", [None, "auto"])
async def test_every_repetition_lost_to_the_judge_is_an_error(env, tmp_path, rule):
    from evals.execute.runner import Variant, run_variants
    from evals.record.repetitions import RepeatRule
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    handler, _ = storm(1000, PASSING, retry_after="0")
    with fake_openai_server(handler) as (base, _):
        results = await run_variants(env, judged_case(tmp_path), [Variant("v", chat)],
                                     judge=judge_of(wire(base, "openai/judge"), True),
                                     repeat=3, rule=RepeatRule(max=3) if rule else None)
    assert [r.status for r in results["v"]] == ["ERROR"] * 3
    assert len(chat.requests) == 3  # one answer a repetition, never asked again for the judge


SETTLED = """
- id: settled
  prompt: "Is the Trotec fast?"
  assert:
    - kind: no_unknown_tools
"""


def settling_judge(model):
    from evals.judge.questions import QUESTIONS
    from evals.judge.setup import JudgeSetup
    from evals.judge.trust import Trust

    return JudgeSetup(model, Trust(False, "rubric untrusted"),
                      questions={kind: Trust(True, "kappa 0.80") for kind in QUESTIONS})


@pytest.mark.parametrize(("lasts", "status"), [(2, "PASS"), (1000, "ERROR")])
async def test_a_judge_storm_while_settling_a_structural_check(env, tmp_path, lasts, status):
    import textwrap

    from evals.load.cases import load_cases
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    (tmp_path / "s.yaml").write_text(textwrap.dedent(SETTLED))
    # a sentence the check cannot place: a trusted judge is asked whether the lab has it
    chat = ScriptedModel(say("The Trotec Speedy 400 is much faster than a Glowforge Pro."),
                         repeat=True)
    handler, _ = storm(lasts, '{"answer": "no", "reason": "a comparison"}', retry_after="0")
    with fake_openai_server(handler) as (base, _):
        from evals.execute.runner import run_suite

        [result] = await run_suite(env, load_cases(tmp_path), chat,
                                   judge=settling_judge(wire(base, "openai/judge")))
    # not left UNDECIDED as if no judge could settle it: settled, or lost to the provider
    assert result.status == status and len(chat.requests) == 1
    if status == "ERROR":
        assert "the judge's call (openai/judge)" in result.attempts[0].error


async def test_a_failed_check_stays_a_fail_when_the_judge_is_lost(env, tmp_path):
    import textwrap

    from evals.execute.runner import run_suite
    from evals.load.cases import load_cases
    from tests.fake_openai import fake_openai_server
    from tests.fakes import ScriptedModel, say

    (tmp_path / "f.yaml").write_text(textwrap.dedent(JUDGED) + textwrap.indent(
        'assert:\n  - kind: mentions_tool\n    value: "Trotec Speedy 400"\n', "  "))
    chat = ScriptedModel(say("The Form 4 prints resin."), repeat=True)
    handler, _ = storm(1000, PASSING, retry_after="0")
    with fake_openai_server(handler) as (base, _):
        [result] = await run_suite(env, load_cases(tmp_path), chat,
                                   judge=judge_of(wire(base, "openai/judge"), True))
    # the answer failed a decided check: that is the agent's, whatever the judge would say
    assert result.status == "FAIL"
    assert all(a.failure is None and a.failed_a_check for a in result.attempts)
