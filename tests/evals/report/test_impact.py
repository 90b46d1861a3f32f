"""The impact of a change as a person reads it: the run's one line and the whole report, each
context's diff said once, the inputs and other reasons with the items they touch."""

import pytest

from evals.execute.agent import agent_info
from evals.execute.impact import Baseline, ContextChange, Impact, InputChange
from evals.record.comparison import FragmentDiff, ToolDiff
from evals.report.impact import NO_BASELINE, render, run_summary, summary
from tests.evals.execute.impact.helpers import GIT, SETTINGS, plan_of

KINDS = {"a": "case", "b": "case", "c": "case", "s@calm": "scenario", "t": "case"}


@pytest.fixture
def base():
    return Baseline("run r1", agent_info("m", SETTINGS, {}, GIT), plan_of([]))


def head(base):
    return [f"against run r1: agent {base.agent.fingerprint[:8]} (m),"
            f" plan {base.plan.fingerprint[:8]}"]


def test_an_untouched_change_says_so(base):
    result = Impact(base, 5, contexts_compared=3, kinds=KINDS)
    assert render(result) == [*head(base), "contexts: 0 of 3 changed",
                              "this change touches 0 of 5 items; 5 untouched"]


def test_contexts_changed_alike_are_said_once_with_their_diff(base):
    prompt = (FragmentDiff(capability="maintenance", diff=("-Read it.", "+Read it all."),
                           more=2),)
    tools = (ToolDiff(name="update_ticket", capability="maintenance",
                      what="description changed", diff=("+Say which.",)),)
    alike = [ContextChange(key=f"staff /tools/{slug} demo", where=f"staff on /tools/{slug}",
                           new=False, prompt=prompt, tools=tools, order_changed=False,
                           items=(item,)) for slug, item in (("form-4", "a"), ("prusa", "b"))]
    moved = ContextChange(key="anonymous / demo", where="anonymous on /", new=False, prompt=(),
                          tools=(), order_changed=True, items=("s@calm",))
    result = Impact(base, 5, contexts_compared=3, changed=(*alike, moved),
                    touched=frozenset({"a", "b", "s@calm"}), kinds=KINDS)
    assert render(result)[1:] == [
        "contexts: 3 of 3 changed",
        "  staff on /tools/form-4, staff on /tools/prusa: system prompt changed in maintenance;"
        " tools changed: update_ticket (maintenance)",
        "    maintenance:",
        "      -Read it.",
        "      +Read it all.",
        "      … 2 more changed line(s)",
        "    tool update_ticket (maintenance): description changed",
        "      +Say which.",
        "    touches 2 cases (a, b)",
        "  anonymous on /: the same tools in another order",
        "    touches 1 scenario (s@calm)",
        "this change touches 3 of 5 items (staff on /tools/…; anonymous on /); 2 untouched"]


def test_inputs_are_said_with_the_items_they_touch_and_counted_in_the_line(base):
    photo = InputChange("photo", "photo evals/fixtures/photos/x.jpg changed", ("a",),
                        ("photos/x.jpg",))
    records = [InputChange("catalogue record", f"catalogue record {what}", ("b", "s@calm"),
                           ("app/seed.py",)) for what in ("form-4 changed", "prusa added")]
    result = Impact(base, 5, inputs=(photo, *records),
                    touched=frozenset({"a", "b", "s@calm"}), kinds=KINDS)
    lines = render(result)
    assert lines[2:5] == [
        "inputs changed (what a request carries besides its context):",
        "  photo evals/fixtures/photos/x.jpg changed: 1 case (a)",
        "  catalogue records form-4 changed, prusa added: 1 case (b), 1 scenario (s@calm)"]
    assert lines[-1] == summary(result) == (
        "this change touches 3 of 5 items (1 photo changed; 2 catalogue records changed);"
        " 2 untouched")


def test_other_reasons_notes_and_items_not_known_yet(base):
    result = Impact(
        base, 5, reasons=(("the chat model changed (m → m2)", ("a", "b", "c", "s@calm", "t")),
                          ("new since the baseline", ("t",))),
        touched=frozenset({"a", "b", "c", "s@calm", "t"}), notes=("repetitions changed: 1 -> 2",),
        removed=("gone",), kinds=KINDS)
    assert render(result)[2:] == [
        "touched for other reasons:",
        "  the chat model changed (m → m2): every item (5)",
        "  new since the baseline: 1 case (t)",
        "also in the plan (no request changes): repetitions changed: 1 -> 2",
        "also in the plan (no request changes): 1 item(s) of the baseline are not in today's"
        " plan: gone",
        "this change touches 5 of 5 items (the chat model changed; 1 new); 0 untouched"]
    result = Impact(base, 5, contexts_compared=1, unknown=("b", "c"), kinds=KINDS)
    assert render(result)[2] == "not known yet (their context is not composed): 2 cases (b, c)"
    assert summary(result) == ("this change touches 0 of 5 items; 3 untouched; 2 not known yet"
                               " (the look-alike lab's contexts are composed once it is"
                               " seeded)")


def test_no_baseline_says_every_item_calls_the_model():
    result = Impact(None, 5)
    assert render(result) == [NO_BASELINE] and summary(result) == NO_BASELINE
    assert NO_BASELINE == "no earlier complete run under this plan: every item calls the model"


async def test_the_run_summary_says_when_the_store_cannot_tell(store):
    line = await run_summary(store, {}, [], plan_of([]), "m", SETTINGS)
    assert line == NO_BASELINE

    async def broken(plan_fingerprint):
        raise TimeoutError("the store did not answer in 10 s")

    store.last_complete_run = broken
    line = await run_summary(store, {}, [], plan_of([]), "m", SETTINGS)
    assert line == "impact: not known (TimeoutError: the store did not answer in 10 s)"
