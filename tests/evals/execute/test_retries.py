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
