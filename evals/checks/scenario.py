"""The structural checks of a scenario's conversation: every turn answered, the expected tool
calls (by argument and result selectors), and the end state its database was left in.

A scenario file gives these under its own keys (`expect_actions:`, `end_state:`); the models
below are both the file's fields and the checks' arguments. The end state is counted by the
executor in the conversation's own database before it is dropped, and handed in as evidence
(`Transcript.end_state`), so the check itself stays pure.
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from evals.checks._registry import Args, NoArgs, Verdict, assertion
from evals.checks.selectors import Selectors, call_misses, fitting, tool_names
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import Transcript


class ExpectAction(Args):
    """A tool call the conversation must contain: the tool, and selectors on its arguments
    and its result (evals/checks/selectors.py: `field: value`, `field_in: [a, b]`,
    `field_contains: text`, `field_matches: pattern`)."""

    tool: str = Field(json_schema_extra=tool_names())
    arguments: Selectors = {}
    result: Selectors = {}


class EndState(Args):
    """A row that must (or must not) exist in the conversation's database afterwards."""

    table: str
    exists: bool = True
    where: dict[str, JsonValue] = {}

    def describe(self) -> str:
        wanted = "exists" if self.exists else "does not exist"
        return f"end_state {self.table} {self.where or '(any row)'} {wanted}"


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
           needs=frozenset({"tool_calls"}),
           label=lambda a: f"expect_action {a.tool} {a.arguments or ''}".strip())
def expect_action(turn: Transcript, args: ExpectAction, fixtures: Fixtures) -> Verdict:
    ran = turn.ran(args.tool)
    if fitting(ran, args.arguments, args.result):
        return True, f"{args.tool} ran with matching arguments"
    if ran:
        why = "; ".join(call_misses(ran[-1], args.arguments, args.result))
        return False, f"{args.tool} ran {len(ran)} time(s), none fits: {why}"
    return False, f"{args.tool} never ran successfully"


@assertion("end_state", args=EndState, reads_answer=False, authored=False,
           label=lambda a: a.describe())
def end_state(turn: Transcript, args: EndState, fixtures: Fixtures) -> Verdict:
    n = turn.end_state.get(args.describe())
    if n is None:
        raise ValueError("the conversation's end state was not counted")
    return (n > 0) == args.exists, f"{n} matching row(s) in {args.table}"
