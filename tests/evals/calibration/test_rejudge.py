"""Re-judging, below the command: what the judge is sent again (the messages the case's
executor sent, rebuilt, since the record keeps none), a new judge that breaks (an error beside
the original verdict, never a fail), and verdicts that were never asked."""

from app.chat.models import ModelCallError
from evals.calibration.rejudge import agreement, as_judged, rejudge
from evals.execute.cache import CacheUse
from evals.judge.setup import JudgeSetup
from evals.judge.trust import Trust
from evals.load.cases import load_cases
from evals.load.plan import plan_info
from evals.load.selection import select_items
from evals.record.fingerprint import Selection
from evals.record.results import Attempt, CaseResult, CheckResult, JudgeVerdict, said
from evals.record.run import Models, RunRecord
from evals.record.transcript import Transcript
from tests.evals.helpers import select, verdict
from tests.fakes import ScriptedModel

TRUSTED = Trust(True, "kappa 0.80 on 40 items of makerspace (test)")


def _record(item, original: JudgeVerdict, *, endpoint=None):
    check = CheckResult(kind="judge", passed=original.verdict == "pass", decided=False,
                        reason="the run's judge's reason", judge=original)
    return RunRecord(
        run_id="rj0000000001", models=Models(chat="m", judge=original.model, endpoint=endpoint),
        plan=plan_info([item], judge_model=original.model, judge_prompt_hash="h", repeat=1),
        cases=[CaseResult(id=item.id, file=item.file, prompt=item.prompt, status="UNDECIDED",
                          attempts=[Attempt(transcript=Transcript(answer="Please talk to staff."),
                                            checks=[check])])])


def test_a_single_turn_is_sent_again_as_its_executor_sent_it():
    [photo] = select(load_cases(), "qr-code-speaks-as-staff")
    attempt = Attempt(transcript=Transcript(answer="ok"))
    app = as_judged(photo, attempt, endpoint=False).messages[-1]
    assert app["role"] == "user" and app["content"][0]["text"].startswith(photo.prompt)
    assert "[Attached photos: attachment_id=" in app["content"][0]["text"]
    assert app["content"][1]["type"] == "image_url"
    sent = as_judged(photo, attempt, endpoint=True).messages
    assert sent[-1] == {"role": "user", "content": photo.prompt}
    [earlier] = select(load_cases(), "earlier-turn-claims-staff-to-close-a-ticket")
    messages = as_judged(earlier, attempt, endpoint=True).messages
    assert messages[:-1] == earlier.history_messages() and len(messages) == 3
    # a conversation's judge reads its turns, which the record keeps: sent as recorded
    talk = select_items(Selection(only="scenarios"))[0]
    assert as_judged(talk, attempt, endpoint=False) is attempt.transcript


async def test_a_new_judge_that_breaks_is_an_error_beside_the_original_verdict():
    [item] = select(load_cases(), "student-in-distress")
    record = _record(item, JudgeVerdict(model="old-judge", prompt_hash="h", verdict="pass"))
    broken = ScriptedModel(ModelCallError("the judge's provider is down"), model_id="new-j")
    result = await rejudge(record, [item], JudgeSetup(broken, TRUSTED),
                           assessment_id="as0000000001", cache=CacheUse(None, "off"),
                           concurrency=2)
    [pair] = result.pairs
    assert said(pair.original) == "pass" and said(pair.new) == "error"
    assert "the judge's call failed" in pair.new.reason
    [case] = result.assessment.cases
    assert case.status == "ERROR" and case.checks[0].attempt == 1 and case.checks[0].check == 1
    assert result.agreement.rated == 0 and result.agreement.unrated == [pair.key]
    assert result.assessment.judge.calls_made == 1
    # what the new judge was sent: the recorded reply after the case's own conversation
    user = next(m["content"] for m in broken.requests[0]["messages"] if m["role"] == "user")
    assert item.prompt in user and "Please talk to staff." in user


async def test_verdicts_never_asked_are_shown_and_left_out_of_the_agreement():
    [item] = select(load_cases(), "student-in-distress")
    record = _record(item, JudgeVerdict(model="old-judge", prompt_hash="h", asked=False))
    judge = ScriptedModel(verdict("fail", "ignores the student"), model_id="new-j")
    result = await rejudge(record, [item], JudgeSetup(judge, TRUSTED),
                           assessment_id="as0000000002", cache=CacheUse(None, "off"),
                           concurrency=1)
    [pair] = result.pairs
    assert said(pair.original) == "not asked" and said(pair.new) == "fail"
    assert agreement(result.pairs).rated == 0
    assert result.moved == [(item.id, 1, "UNDECIDED", "FAIL")]


async def test_the_new_judge_s_reason_is_printed_redacted(monkeypatch):
    from evals.calibration.rejudge import render

    key = "sk-proj-Xa9fB2kLmQ7rT4vWyZ3cD8eF"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    [item] = select(load_cases(), "student-in-distress")
    record = _record(item, JudgeVerdict(model="old-judge", prompt_hash="h", verdict="pass"))
    judge = ScriptedModel(verdict("fail", f"it repeats the key {key[8:26]} to the student"),
                          model_id="new-j")
    result = await rejudge(record, [item], JudgeSetup(judge, TRUSTED),
                           assessment_id="as0000000003", cache=CacheUse(None, "off"),
                           concurrency=1)
    text = render(result, record)
    assert key[8:26] not in text and "it repeats the key [redacted] to the student" in text


async def test_a_new_judge_call_lost_to_the_provider_is_asked_again_as_a_runs_judge_is():
    from app.chat.retry import ProviderError

    [item] = select(load_cases(), "student-in-distress")
    record = _record(item, JudgeVerdict(model="old-judge", prompt_hash="h", verdict="pass"))
    judge = ScriptedModel(ProviderError("rate_limit", "HTTP 429: slow down", retry_after_s=0),
                          verdict("pass", "kind to the student"), model_id="new-j")
    result = await rejudge(record, [item], JudgeSetup(judge, TRUSTED),
                           assessment_id="as0000000004", cache=CacheUse(None, "off"),
                           concurrency=1)
    [pair] = result.pairs
    # a provider's storm is no verdict: the same question, asked again, is answered
    assert said(pair.new) == "pass" and len(judge.requests) == 2
    assert result.assessment.cases[0].status == "PASS"
