import json
import textwrap

import pytest

from app.chat.models import ModelCallError
from evals.checks import ASSERTIONS, AssertionKind
from evals.execute.runner import run_suite
from evals.load.cases import load_cases
from evals.report.console import (
    exit_code,
    print_report,
    redact,
    skip_lines,
    totals_line,
    write_artifact,
)
from evals.report.rescore import load_artifact, rescore
from tests.fakes import ScriptedModel, say

CASES = """
- id: wants-trotec
  prompt: "What cuts acrylic?"
  assert:
    - kind: mentions_tool
      value: "Trotec Speedy 400"
- id: looks-at-photo
  prompt: "What is this?"
  photos: [IMG_2041.jpg]
  context: { catalog: lab }
  assert:
    - kind: identified_tool
      value: form-4
"""


@pytest.fixture
def cases(tmp_path):
    (tmp_path / "c.yaml").write_text(textwrap.dedent(CASES))
    from evals.load.cases import PHOTOS_DIR
    return load_cases(tmp_path, PHOTOS_DIR)


async def run(env, cases, *steps, **kw):
    model = ScriptedModel(*steps)
    results = await run_suite(env, cases[:1], model, **kw)
    return results[0], model


GOOD, BAD = say("Use the Trotec Speedy 400."), say("Use the Form 4.")


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


async def test_a_failed_check_stays_a_fail_when_the_retry_errors(env, cases):
    result, _ = await run(env, cases, BAD, ModelCallError("503"), ModelCallError("503"))
    assert result.status == "FAIL"
    assert result.attempts[1].failure is not None


async def test_a_check_that_raises_is_an_error_recorded_as_data(env, cases, monkeypatch):
    def broken(turn, args, fixtures):
        raise RuntimeError("bug in the check")

    monkeypatch.setitem(ASSERTIONS, "mentions_tool",
                        AssertionKind("mentions_tool", ASSERTIONS["mentions_tool"].args, broken))
    result, _ = await run(env, cases, GOOD, GOOD)
    assert result.status == "ERROR"
    assert "the check raised RuntimeError: bug in the check" in result.attempts[0].checks[0].reason


async def test_photo_case_is_skipped_for_a_model_without_image_input(env, cases):
    model = ScriptedModel(GOOD)
    results = await run_suite(env, cases, model)
    assert [r.status for r in results] == ["PASS", "SKIPPED"]
    assert "takes no image input, by litellm's model info" in results[1].skipped_reason
    assert len(model.requests) == 1
    assert totals_line(results) == ("1/2 passed · 0 flaky · 0 failed · 0 undecided · 0 errored"
                                    " · 1 skipped")
    assert skip_lines(results) == [f"  skipped 1: {results[1].skipped_reason}"]


@pytest.mark.parametrize(("model_id", "sees"), [
    ("anthropic/claude-sonnet-4-5", True), ("openai/gpt-4o", True),
    ("openai/gpt-3.5-turbo", False), ("openai/qwen2.5-coder-1.5b-instruct", False)])
def test_vision_is_decided_by_litellm_model_info(cases, model_id, sees):
    from evals.execute.runner import skip_reason

    class Named:
        def __init__(self, model_id):
            self.model_id = model_id

    photo_case = cases[1]
    assert (skip_reason(photo_case, Named(model_id), None) is None) is sees
    assert skip_reason(photo_case, Named(model_id), True) is None  # EVAL_VISION=1
    assert skip_reason(photo_case, Named(model_id), False) is not None  # EVAL_VISION=0


async def test_a_blank_answer_fails_with_no_answer(env, cases):
    result, _ = await run(env, cases, say("  "), say(""))
    assert result.status == "FAIL"
    assert result.attempts[0].checks[0].kind == "answer"
    assert result.attempts[0].checks[0].reason == "no answer"


def test_exit_code_fails_on_fail_error_or_undecided_not_flaky():
    from evals.record.results import CaseResult

    def r(status):
        return CaseResult(id="x", file="f.yaml", prompt="p", status=status)

    assert exit_code([r("PASS"), r("FLAKY"), r("SKIPPED")]) == 0
    assert exit_code([r("PASS"), r("FAIL")]) == 1
    assert exit_code([r("ERROR")]) == 1
    assert exit_code([r("UNDECIDED")]) == 1
    assert exit_code([r("PASS"), r("SKIPPED")], fail_on_skip=True) == 1


async def test_report_artifact_and_rescore(env, cases, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    model = ScriptedModel(say("Use the Trotec Speedy 400 (key sk-very-secret-value)."))
    results = await run_suite(env, cases, model)
    print_report(results, __import__("sys").stdout)
    out = capsys.readouterr().out
    assert "  PASS      wants-trotec" in out and "SKIPPED  looks-at-photo" in out
    assert "sk-very-secret-value" not in out  # the console is redacted like the artifact
    path = write_artifact(results, {"models": {"chat": "scripted/fake"}}, tmp_path / "run.json")
    text = path.read_text()
    assert "sk-very-secret-value" not in text and "[redacted]" in text
    data = json.loads(text)
    case = data["cases"][0]
    assert data["totals"]["passed"] == 1 and data["models"]["chat"] == "scripted/fake"
    assert case["attempts"][0]["checks"][0] == {
        "kind": "mentions_tool {'value': 'Trotec Speedy 400'}", "passed": True,
        "reason": "names Trotec Speedy 400", "error": False, "judge": None, "decided": True,
        "required": True}
    assert data["version"] == 2
    assert {"answer", "tool_calls", "latency_ms", "usage"} <= set(case["attempts"][0])
    # Re-scored against a stricter case file: no model call, a different verdict.
    stricter = tmp_path / "stricter"
    stricter.mkdir()
    (stricter / "c.yaml").write_text(textwrap.dedent(CASES).replace(
        'value: "Trotec Speedy 400"', 'value: "Form 4"'))
    from evals.load.cases import PHOTOS_DIR
    rescored = rescore(load_artifact(path), load_cases(stricter, PHOTOS_DIR))
    assert [r.status for r in rescored] == ["FAIL", "SKIPPED"]


def test_redact_only_touches_secret_looking_variables():
    env = {"ANTHROPIC_API_KEY": "abc123456", "HOME": "/root"}
    assert redact("abc123456 at /root", env) == "[redacted] at /root"


def test_rescore_of_a_broken_artifact_is_a_clear_error(tmp_path):
    from evals.report.rescore import ArtifactError

    bad = tmp_path / "x.json"
    with pytest.raises(ArtifactError, match="cannot read the run artifact"):
        load_artifact(bad)
    bad.write_text("{")
    with pytest.raises(ArtifactError, match="not JSON"):
        load_artifact(bad)
    bad.write_text("[]")
    with pytest.raises(ArtifactError, match="a run artifact is a JSON object"):
        load_artifact(bad)
    bad.write_text('{"cases": [{"id": "x", "file": "f.yaml", "status": "PASS"}]}')
    with pytest.raises(ArtifactError, match=r"field cases\.0\.prompt: Field required"):
        load_artifact(bad)
    bad.write_text('{"version": 99, "cases": []}')
    with pytest.raises(ArtifactError, match="artifact version 99; this harness reads 1, 2"):
        load_artifact(bad)


def test_an_artifact_written_to_a_device_or_pipe_is_written_not_replaced(tmp_path):
    import os
    import threading

    from evals.report.console import write_atomically

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_atomically(fifo, '{"status": "running"}')
    reader.join(timeout=5)
    assert got == ['{"status": "running"}'] and fifo.is_fifo()  # still a pipe
    plain = tmp_path / "run.json"
    write_atomically(plain, "one")
    write_atomically(plain, "two")
    assert plain.read_text() == "two" and not list(tmp_path.glob(".*.tmp"))


async def test_one_task_breaking_cancels_the_rest_and_raises():
    import asyncio

    from evals.execute.runner import _until_stopped

    async def slow():
        await asyncio.sleep(30)

    async def breaks():
        raise RuntimeError("broken")

    tasks = [asyncio.create_task(slow()), asyncio.create_task(breaks())]
    with pytest.raises(RuntimeError, match="broken"):
        await asyncio.wait_for(_until_stopped(tasks, asyncio.Event()), 5)
    assert tasks[0].cancelled()


async def test_a_stop_lets_quick_cases_finish_and_cancels_slow_ones(monkeypatch):
    import asyncio

    import evals.execute.runner as runner

    monkeypatch.setattr(runner, "GRACE_S", 0.2)
    finished = []

    async def takes(seconds):
        await asyncio.sleep(seconds)
        finished.append(seconds)

    stop = asyncio.Event()
    tasks = [asyncio.create_task(takes(0.05)), asyncio.create_task(takes(30))]
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, stop.set)
    await asyncio.wait_for(runner._until_stopped(tasks, stop), 5)
    assert finished == [0.05] and tasks[1].cancelled()


async def test_evidence_that_cannot_be_gathered_is_an_error_that_keeps_the_answer(
        env, monkeypatch):
    import evals.execute.executors as executors
    from evals.execute.runner import attempt
    from evals.load.cases import select

    async def broken(*args, **kwargs):
        raise OSError("blob server gone")

    monkeypatch.setattr(executors, "citation_evidence", broken)
    case = next(c for c in load_cases() if any(
        ASSERTIONS[k.kind].needs_evidence for k in c.checks))
    [case] = select([case], case.id)
    done = await attempt(env, case, ScriptedModel(say("See the manual.")))
    assert done.error == "gathering citation evidence failed: blob server gone"
    assert done.answer == "See the manual." and done.checks == []
