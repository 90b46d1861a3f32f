"""The check registry: every kind by name, each with its own argument model, structural and
judged alike (a judged check is a check that needs the judge).

A structural check is a pure function of the transcript, its arguments and the fixtures; it
returns (passed, reason) and does no I/O: evidence that needs I/O is gathered by the executor
beforehand. A measured check (an item's latency or cost limit) is a pure function of the
finished attempt (its latency, cost and calls are known only then); it may answer None for
passed: the figure is unknown, so the check cannot decide. A judged check asks the judge one
question about the transcript; asking, trust and the judge's failures are the same for every
judged kind (evals/checks/judged.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from evals.fixtures.catalog import Fixtures
from evals.judge.setup import JudgeSetup
from evals.record.results import Attempt, CheckResult
from evals.record.transcript import Transcript

Verdict = tuple[bool, str]
CheckFn = Callable[[Transcript, Any, Fixtures], Verdict]
NO_ANSWER = "no answer"
# A measured check's verdict: passed (None: the figure is unknown, undecided) and the reason.
Measured = tuple[bool | None, str]
MeasureFn = Callable[[Attempt, Any], Measured]


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Args(BaseModel):
    """Base for check arguments: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class About:
    """Where an item ran, as a judged check tells the judge: the page, who asked, the
    catalogue, and the photos the visitor sent."""

    page: str
    audience: str | None
    catalog: str
    pictures: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckSpec:
    """One check of an item: its kind, its validated arguments, the line of the file that
    asked for it, and whether it counts (an informational criterion is only reported)."""

    kind: str
    args: BaseModel
    line: int = 0
    required: bool = True

    def describe(self) -> str:
        """The check's name in the report: the kind's own label, or the kind and its
        arguments."""
        label = CHECKS[self.kind].label
        if label is not None:
            return label(self.args)
        data = self.args.model_dump(exclude_none=True)
        return self.kind + (f" {data}" if data else "")


JudgedFn = Callable[[CheckSpec, Transcript, JudgeSetup | None, About], Awaitable[CheckResult]]


@dataclass(frozen=True)
class CheckKind:
    kind: str
    args: type[BaseModel]
    check: CheckFn | None = None  # a structural check
    ask: JudgedFn | None = None  # a judged check
    measure: MeasureFn | None = None  # a measured check, of the finished attempt
    needs_evidence: bool = False  # the executor fetches every cited document first
    reads_answer: bool = True  # False: judges the tool calls or the conversation only
    authored: bool = True  # may be named in a case's `assert:` list
    label: Callable[[Any], str] | None = None

    @property
    def needs_judge(self) -> bool:
        return self.ask is not None


CHECKS: dict[str, CheckKind] = {}


def authored() -> dict[str, CheckKind]:
    """The kinds a case file's `assert:` may name."""
    return {k: v for k, v in CHECKS.items() if v.authored}


def _register(kind: CheckKind) -> None:
    if kind.kind in CHECKS:
        raise ValueError(f"check kind {kind.kind!r} is registered twice")
    if not (isinstance(kind.args, type) and issubclass(kind.args, BaseModel)):
        raise TypeError(f"check {kind.kind!r}: args must be a pydantic model class")
    CHECKS[kind.kind] = kind


def assertion(
    kind: str, *, args: type[BaseModel] = NoArgs, needs_evidence: bool = False,
    reads_answer: bool = True, authored: bool = True,
    label: Callable[[Any], str] | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Register a structural check under `kind`; validated here so a mistake fails at import.
    A check that reads the answer's words fails a blank answer before it runs: saying nothing
    is never grounded."""

    def wrap(fn: CheckFn) -> CheckFn:
        if inspect.iscoroutinefunction(fn) or len(inspect.signature(fn).parameters) != 3:
            raise TypeError(f"assertion {kind!r}: a plain function of (turn, args, fixtures)")
        check = fn
        if reads_answer:
            def check(turn: Transcript, parsed: Any, fixtures: Fixtures) -> Verdict:
                if not turn.answer.strip():
                    return False, NO_ANSWER
                return fn(turn, parsed, fixtures)
        _register(CheckKind(kind, args, check=check, needs_evidence=needs_evidence,
                            reads_answer=reads_answer, authored=authored, label=label))
        return fn

    return wrap


def judged(kind: str, *, args: type[BaseModel], label: Callable[[Any], str]
           ) -> Callable[[JudgedFn], JudgedFn]:
    """Register a judged check under `kind`: an async function of (spec, transcript, judge,
    about) that returns the check's result. Judged kinds are built from a file's own keys
    (a case's rubric, a scenario's criteria), never named in `assert:`."""

    def wrap(fn: JudgedFn) -> JudgedFn:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"judged check {kind!r}: an async function")
        _register(CheckKind(kind, args, ask=fn, reads_answer=False, authored=False,
                            label=label))
        return fn

    return wrap


def measured(kind: str, *, args: type[BaseModel], label: Callable[[Any], str]
             ) -> Callable[[MeasureFn], MeasureFn]:
    """Register a measured check under `kind`: a plain function of (attempt, args). Measured
    kinds are built from an item's own keys (`max_latency_s`, `max_cost`), never named in
    `assert:`."""

    def wrap(fn: MeasureFn) -> MeasureFn:
        if inspect.iscoroutinefunction(fn) or len(inspect.signature(fn).parameters) != 2:
            raise TypeError(f"measured check {kind!r}: a plain function of (attempt, args)")
        _register(CheckKind(kind, args, measure=fn, reads_answer=False, authored=False,
                            label=label))
        return fn

    return wrap


def measure_checks(specs: tuple[CheckSpec, ...], attempt: Attempt) -> list[CheckResult]:
    """The measured checks of an item on its finished attempt; an unknown figure is an
    undecided check, never a pass."""
    results = []
    for spec in specs:
        fn = CHECKS[spec.kind].measure
        if fn is None:
            continue
        passed, reason = fn(attempt, spec.args)
        results.append(CheckResult(kind=spec.describe(), passed=bool(passed), reason=reason,
                                   decided=passed is not None, required=spec.required))
    return results


async def run_checks(specs: tuple[CheckSpec, ...], transcript: Transcript, fixtures: Fixtures,
                     judge: JudgeSetup | None, about: About) -> list[CheckResult]:
    """Every check of an item on one transcript, in the item's order. A structural check that
    raises is recorded as that check's error, never the run's end (pydantic_evals does the
    same); a judged check records its judge's failures itself."""
    results = []
    for spec in specs:
        kind = CHECKS[spec.kind]
        if kind.measure is not None:  # the attempt is not finished yet: measure_checks
            continue
        if kind.ask is not None:
            results.append(await kind.ask(spec, transcript, judge, about))
            continue
        assert kind.check is not None
        try:
            passed, reason = kind.check(transcript, spec.args, fixtures)
            results.append(CheckResult(kind=spec.describe(), passed=passed, reason=reason,
                                       required=spec.required))
        except Exception as exc:
            results.append(CheckResult(kind=spec.describe(), passed=False, error=True,
                                       required=spec.required,
                                       reason=f"the check raised {type(exc).__name__}: {exc}"))
    return results


def structural_only(specs: tuple[CheckSpec, ...]) -> tuple[CheckSpec, ...]:
    return tuple(s for s in specs if not CHECKS[s.kind].needs_judge)


def needs_evidence(specs: tuple[CheckSpec, ...]) -> bool:
    return any(CHECKS[s.kind].needs_evidence for s in specs)
