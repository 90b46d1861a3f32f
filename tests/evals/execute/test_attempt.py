"""One attempt of an item: a check that raises, a blank answer, an unknown executor, and the
limits on latency and cost checked last, on the finished attempt."""

import textwrap

import pytest

from evals.checks import CHECKS
from evals.execute.attempt import attempt
from evals.execute.executors import Setup
from evals.load.cases import load_cases
from evals.settings import PHOTOS_DIR
from tests.evals.execute.scripted import GOOD, run, two_cases
from tests.fakes import ScriptedModel, say


@pytest.fixture
def cases(tmp_path):
    return two_cases(tmp_path)


async def test_a_check_that_raises_is_an_error_recorded_as_data(env, cases, monkeypatch):
    def broken(turn, args, fixtures):
        raise RuntimeError("bug in the check")

    monkeypatch.setitem(CHECKS, "mentions_tool",
                        CHECKS["mentions_tool"].__class__("mentions_tool",
                                                          CHECKS["mentions_tool"].args, broken))
    result, _ = await run(env, cases, GOOD, GOOD)
    assert result.status == "ERROR"
    assert "the check raised RuntimeError: bug in the check" in result.attempts[0].checks[0].reason


async def test_a_blank_answer_fails_with_no_answer(env, cases):
    result, _ = await run(env, cases, say("  "), say(""))
    assert result.status == "FAIL"
    assert result.attempts[0].checks[0].kind == "answer"
    assert result.attempts[0].checks[0].reason == "no answer"


async def test_an_unknown_executor_is_an_error_of_that_item_not_the_run(env, cases):
    done = await attempt(cases[0], Setup(env, ScriptedModel(say("x"))), None, "nowhere")
    assert done.error is not None and "KeyError" in done.error and done.checks == []


LIMITED = """
- defaults: {max_cost: 0.001}
- id: wants-trotec
  prompt: "What cuts acrylic?"
  max_latency_s: 60
  assert:
    - kind: mentions_tool
      value: "Trotec Speedy 400"
"""


async def test_limits_are_checked_last_on_the_finished_attempt(env, tmp_path, monkeypatch):
    from evals.execute import attempt as attempt_module

    (tmp_path / "c.yaml").write_text(textwrap.dedent(LIMITED))
    limited = load_cases(tmp_path, PHOTOS_DIR)
    result, _ = await run(env, limited, GOOD)  # the scripted model has no price
    assert result.status == "UNDECIDED" and len(result.attempts) == 1
    *_, latency, cost = result.attempts[0].checks
    assert latency.kind == "max_latency 60 s" and latency.passed and latency.decided
    assert cost.kind == "max_cost 0.001 USD" and not cost.decided
    assert cost.reason.startswith("cost unknown")

    monkeypatch.setattr(attempt_module, "price_per_token", lambda model_id: (1.0, 1.0))
    result, _ = await run(env, limited, GOOD, GOOD)  # a token costs 1 USD here
    assert result.status == "FAIL" and len(result.attempts) == 2  # a breach is retried
    assert "over the limit of 0.001 USD" in result.attempts[0].checks[-1].reason
