"""Scheduling a run: a photo case skipped for a model that cannot see, the demo catalogue's
items before the lab's, a stop that lets quick items finish, `--repeat auto`, and an attack
through a tool that a model never calling tools is never counted as resisting."""

import textwrap

import pytest

from app.chat.declared import Declared
from evals.execute.runner import run_suite, skip_reason
from evals.load.cases import load_cases
from evals.report.console import skip_lines, totals_line
from evals.settings import PHOTOS_DIR
from tests.evals.execute.scripted import BAD, GOOD, two_cases
from tests.evals.helpers import select
from tests.fakes import ScriptedModel, say


@pytest.fixture
def cases(tmp_path):
    return two_cases(tmp_path)


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
    class Named(Declared):  # litellm's model information decides what it declares
        def __init__(self, model_id):
            self.model_id = model_id

    photo_case = cases[1]
    assert (skip_reason(photo_case, Named(model_id), None) is None) is sees
    assert skip_reason(photo_case, Named(model_id), True) is None  # EVAL_VISION=1
    assert skip_reason(photo_case, Named(model_id), False) is not None  # EVAL_VISION=0


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


async def test_lab_cases_run_after_the_rest_against_the_look_alikes(env):
    order = []

    def answer(messages, tools):
        system = messages[0]["content"]  # the catalogue is in the stable prompt
        lab = "Ultimaker 3 Extended" in system
        order.append(lab)
        if not lab:
            return say("Sorry, the lab does not have a Glowforge.")
        return say("It could be the Ultimaker 3 or the Ultimaker 3 Extended — which is it?")

    cases = select(load_cases(), "photo-ambiguous-ultimaker,no-glowforge")
    model = ScriptedModel(answer, repeat=True)
    results = await run_suite(env, cases, model, vision=True)
    assert order == [False, True]  # demo case first, without the look-alikes
    assert [r.id for r in results] == ["no-glowforge", "photo-ambiguous-ultimaker"]
    assert [r.status for r in results] == ["PASS", "PASS"]


# --repeat auto ------------------------------------------------------------------------------


TWO_CASES = """
- id: first
  prompt: "What cuts acrylic? (first)"
  assert:
    - kind: mentions_tool
      value: "Trotec Speedy 400"
- id: second
  prompt: "What cuts acrylic? (second)"
  assert:
    - kind: mentions_tool
      value: "Trotec Speedy 400"
"""


class Watching(ScriptedModel):
    """Answers after a pause, counting the calls in flight in all and per prompt."""

    def __init__(self, *steps, **kw):
        super().__init__(*steps, **kw)
        self.now: dict[str, int] = {}
        self.most_per_item = self.most_in_all = 0

    async def complete(self, messages, tools=None, **kw):
        import asyncio

        key = str(messages[-1]["content"])
        self.now[key] = self.now.get(key, 0) + 1
        self.most_per_item = max(self.most_per_item, self.now[key])
        self.most_in_all = max(self.most_in_all, sum(self.now.values()))
        await asyncio.sleep(0.02)
        self.now[key] -= 1
        return await super().complete(messages, tools, **kw)


async def run_auto(env, cases, model, rule, **kw):
    from evals.execute.runner import Variant, run_variants

    out = await run_variants(env, cases, [Variant("v", model)], repeat=rule.max, rule=rule,
                             **kw)
    return [(r.id, r.repetition, r.status) for r in out["v"]]


async def test_auto_runs_an_items_repetitions_one_after_another_and_items_side_by_side(
        env, tmp_path):
    from evals.record.repetitions import RepeatRule

    (tmp_path / "two.yaml").write_text(textwrap.dedent(TWO_CASES))
    cases = load_cases(tmp_path, PHOTOS_DIR)
    model = Watching(GOOD, repeat=True)
    got = await run_auto(env, cases, model, RepeatRule(max=5), concurrency=4)
    # unanimous: settled after 3 of 5, and no fourth call
    assert got == [(c, n, "PASS") for c in ("first", "second") for n in (1, 2, 3)]
    assert len(model.requests) == 6
    assert model.most_per_item == 1 and model.most_in_all == 2


async def test_auto_stops_at_max_whatever_and_a_skip_at_once(env, cases):
    from evals.record.repetitions import RepeatRule

    # PASS, FAIL (two attempts), PASS, FAIL, PASS: open until MAX; a sixth call would error
    model = ScriptedModel(GOOD, BAD, BAD, GOOD, BAD, BAD, GOOD)
    got = await run_auto(env, cases[:1], model, RepeatRule(max=5))
    assert [s for _, _, s in got] == ["PASS", "FAIL", "PASS", "FAIL", "PASS"]
    assert model.steps == []
    # a photo the model cannot see is skipped once: another repetition would skip too
    got = await run_auto(env, cases[1:], ScriptedModel(), RepeatRule(max=5))
    assert got == [("looks-at-photo", 1, "SKIPPED")]


async def test_auto_continues_a_resumed_item_from_its_recorded_repetitions(env, cases):
    from evals.record.repetitions import RepeatRule

    model = ScriptedModel(GOOD)
    done = {("v", "wants-trotec", 1): "PASS", ("v", "wants-trotec", 2): "PASS"}
    got = await run_auto(env, cases[:1], model, RepeatRule(max=5), skip=done)
    assert got == [("wants-trotec", 3, "PASS")] and len(model.requests) == 1
    # one already decided gets nothing more
    done[("v", "wants-trotec", 3)] = "PASS"
    assert await run_auto(env, cases[:1], ScriptedModel(), RepeatRule(max=5), skip=done) == []


async def test_a_stopped_auto_run_starts_no_further_repetition(env, cases):
    import asyncio

    from evals.record.repetitions import RepeatRule

    stop = asyncio.Event()

    async def stop_after_the_first(label, result):
        stop.set()

    model = ScriptedModel(GOOD, repeat=True)
    got = await run_auto(env, cases[:1], model, RepeatRule(max=5), stop=stop,
                         on_done=stop_after_the_first)
    assert got == [("wants-trotec", 1, "PASS")] and len(model.requests) == 1


async def test_a_model_that_never_calls_a_tool_receives_no_attack_through_a_tool(env):
    """The security group against a model that answers "The answer is 42." to everything:
    no attack that arrives through a tool's result reaches it, so none is counted resisted."""
    from evals.checks.security import CHANNEL_TOOLS
    from evals.report.attacks import attack_counts

    security = [c for c in load_cases() if c.attack is not None and not c.judged]
    model = ScriptedModel(say("The answer is 42."), repeat=True)
    results = await run_suite(env, security, model, concurrency=4, vision=True)
    rows = {r.channel: r for r in attack_counts(results)}
    for channel in CHANNEL_TOOLS:
        row = rows[channel]
        assert (row.delivered, row.resisted, row.not_delivered) == (0, 0, row.tried), row
    tool_items = [r for r in results if r.attack.channel in CHANNEL_TOOLS]
    # never PASS: undecided, or failed by a check the attack did not need ("gloves" missing)
    assert tool_items and all(r.status in ("UNDECIDED", "FAIL") for r in tool_items)
    assert all("attack not delivered" in c.reason for r in tool_items
               for c in r.attempts[0].checks if c.kind.startswith("attack delivered"))
    # the earlier turns and the QR codes go with the request itself
    assert rows["earlier_turns"].delivered == rows["earlier_turns"].tried > 0
    assert rows["qr_code"].delivered == rows["qr_code"].tried > 0
