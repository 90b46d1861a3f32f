"""The assertion registry: kinds by name, each with its own argument model.

An assertion is a pure function of the recorded turn, its arguments and the fixtures; it
returns (passed, reason). It does no I/O: evidence that needs I/O is gathered beforehand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from evals.record.turn import Fixtures, RecordedTurn

Verdict = tuple[bool, str]
CheckFn = Callable[["RecordedTurn", Any, "Fixtures"], Verdict]


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Args(BaseModel):
    """Base for assertion arguments: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class AssertionKind:
    kind: str
    args: type[BaseModel]
    check: CheckFn
    needs_evidence: bool = False
    reads_answer: bool = True  # False: judges the tool calls only


ASSERTIONS: dict[str, AssertionKind] = {}


NO_ANSWER = "no answer"


def assertion(
    kind: str, *, args: type[BaseModel] = NoArgs, needs_evidence: bool = False,
    reads_answer: bool = True,
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under `kind`; validated here so a mistake fails at import. A check
    that reads the answer's words fails a blank answer before it runs: saying nothing is
    never grounded."""

    def wrap(fn: CheckFn) -> CheckFn:
        if kind in ASSERTIONS:
            raise ValueError(f"assertion kind {kind!r} is registered twice")
        if not (isinstance(args, type) and issubclass(args, BaseModel)):
            raise TypeError(f"assertion {kind!r}: args must be a pydantic model class")
        if inspect.iscoroutinefunction(fn) or len(inspect.signature(fn).parameters) != 3:
            raise TypeError(f"assertion {kind!r}: a plain function of (turn, args, fixtures)")
        check = fn
        if reads_answer:
            def check(turn: RecordedTurn, parsed: Any, fixtures: Fixtures) -> Verdict:
                if not turn.answer.strip():
                    return False, NO_ANSWER
                return fn(turn, parsed, fixtures)
        ASSERTIONS[kind] = AssertionKind(kind, args, check, needs_evidence, reads_answer)
        return fn

    return wrap
