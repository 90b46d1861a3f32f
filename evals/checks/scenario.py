"""The structural checks of a scenario's conversation: every turn answered, the expected tool
calls (by argument and result selectors), and the end state its database was left in.

A scenario file gives these under its own keys (`expect_actions:`, `end_state:`); the models
below are both the file's fields and the checks' arguments. The end state is counted by the
executor in the conversation's own database before it is dropped, and handed in as evidence
(`Transcript.end_state`), so the check itself stays pure.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from evals.checks._registry import Args, NoArgs, Verdict, assertion
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import Transcript


class ExpectAction(Args):
    """A tool call the conversation must contain: the tool, and selectors on its arguments
    and its result (`field: value`, or `field_contains: text`)."""

    tool: str
    arguments: dict[str, JsonValue] = {}
    result: dict[str, JsonValue] = {}


class EndState(Args):
    """A row that must (or must not) exist in the conversation's database afterwards."""

    table: str
    exists: bool = True
    where: dict[str, JsonValue] = {}

    def describe(self) -> str:
        wanted = "exists" if self.exists else "does not exist"
        return f"end_state {self.table} {self.where or '(any row)'} {wanted}"


def matches(actual: Any, selectors: dict[str, Any]) -> list[str]:
    """What in `actual` (a mapping) does not fit the selectors; empty when all fit. A text
    matches case-insensitively; `field_contains` matches a part of a text."""
    if not isinstance(actual, dict):
        return ["not a mapping"]
    misses = []
    for key, want in selectors.items():
        if key.endswith("_contains"):
            got = actual.get(key.removesuffix("_contains"))
            if not (isinstance(got, str) and str(want).lower() in got.lower()):
                misses.append(f"{key.removesuffix('_contains')} {got!r} lacks {want!r}")
            continue
        got = actual.get(key)
        if want is None:
            ok = got in (None, "")
        elif isinstance(want, str) and isinstance(got, str):
            ok = got.strip().lower() == want.strip().lower()
        else:
            ok = got == want
        if not ok:
            misses.append(f"{key} is {got!r}, not {want!r}")
    return misses


@assertion("answered", args=NoArgs, reads_answer=False, authored=False,
           label=lambda args: "answered")
def answered(turn: Transcript, args: NoArgs, fixtures: Fixtures) -> Verdict:
    """Every assistant turn of the conversation has words in it."""
    blank = [n for n, m in enumerate(turn.turns, start=1)
             if m.role == "assistant" and not m.content.strip()]
    if turn.turns and not blank:
        return True, "every turn answered"
    return False, f"no answer at message(s) {blank or 'the first'}"


@assertion("expect_action", args=ExpectAction, reads_answer=False, authored=False,
           label=lambda a: f"expect_action {a.tool} {a.arguments or ''}".strip())
def expect_action(turn: Transcript, args: ExpectAction, fixtures: Fixtures) -> Verdict:
    ran = turn.ran(args.tool)
    if any(not matches(c.arguments, args.arguments) and not matches(c.result, args.result)
           for c in ran):
        return True, f"{args.tool} ran with matching arguments"
    if ran:
        why = "; ".join(matches(ran[-1].arguments, args.arguments)
                        + matches(ran[-1].result, args.result))
        return False, f"{args.tool} ran {len(ran)} time(s), none fits: {why}"
    return False, f"{args.tool} never ran successfully"


@assertion("end_state", args=EndState, reads_answer=False, authored=False,
           label=lambda a: a.describe())
def end_state(turn: Transcript, args: EndState, fixtures: Fixtures) -> Verdict:
    n = turn.end_state.get(args.describe())
    if n is None:
        raise ValueError("the conversation's end state was not counted")
    return (n > 0) == args.exists, f"{n} matching row(s) in {args.table}"
