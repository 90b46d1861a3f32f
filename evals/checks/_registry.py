"""The check registry: every kind by name, each with its own argument model, structural and
judged alike (a judged check is a check that needs the judge).

A structural check is a pure function of the transcript, its arguments and the fixtures; it
returns (passed, reason) and does no I/O: evidence that needs I/O is gathered by the executor
beforehand. Its `passed` is None when it cannot decide (a sentence it cannot place, an answer
in a language it does not read): UNDECIDED with the reason, never a guess either way. A
measured check (an item's latency or cost limit, an attack's delivery) is a pure function of
the finished attempt. A judged check asks the judge one question about the transcript;
asking, trust and the judge's failures are the same for every judged kind
(evals/checks/judged.py).

Each kind declares, when it is registered, what it needs to see (`needs`: the tool calls, the
cited documents, an attack that reached the model, a price, a measured latency) and which
language's words it reads (`reads`). The endpoint executor (which skips what it cannot show)
and every run of the checks, live, replayed or re-scored (`run_checks`: undecided where the
transcript lacks what a check needs) read those declarations here; no list of kinds is kept
anywhere else.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, create_model

from evals.checks._language import unreadable
from evals.checks.settle import settle
from evals.fixtures.catalog import Fixtures
from evals.judge.setup import JudgeSetup
from evals.record.results import Attempt, CheckResult
from evals.record.transcript import Transcript

# passed (None: undecided) and the reason.
Verdict = tuple[bool | None, str]
CheckFn = Callable[[Transcript, Any, Fixtures], Verdict]
NO_ANSWER = "no answer"

# What a check may need to see. tool_calls: the calls the assistant made (an endpoint hides
# them); documents: every cited document fetched over HTTP; attack: the planted text reached
# the model; price: the chat model's price; latency: the attempt's measured latency.
Need = Literal["tool_calls", "documents", "attack", "price", "latency"]
NEEDS: tuple[Need, ...] = get_args(Need)
NEED_WORDS: dict[str, str] = {
    "tool_calls": "its tool calls", "documents": "the cited documents",
    "attack": "an attack that reached the model", "price": "a price",
    "latency": "a measured latency"}
# The language whose words a check reads: an ISO 639-1 code, None for none (tool calls,
# names, addresses), or a function of the check's arguments (a literal's language).
Reads = str | None | Callable[[Any], str | None]


class Doubt(str):
    """The reason of an undecided structural verdict that narrow questions to a trusted judge
    can settle: the question's kind (evals/judge/questions.py) and every (sentence, subject)
    the check could not place in the answer (the subject: a machine's name, or "" for the
    sentence as a whole). Each is asked; the check passes only if every one is answered no."""

    question: str
    asks: tuple[tuple[str, str], ...]

    def __new__(cls, reason: str, *, question: str, asks: tuple[tuple[str, str], ...]
                ) -> Doubt:
        if not asks:
            raise ValueError("a doubt asks about at least one sentence")
        made = super().__new__(cls, reason)
        made.question, made.asks = question, asks
        return made

    def also(self, sentence: str, subject: str = "") -> Doubt:
        """The same doubt, asking about one more sentence too."""
        if (sentence, subject) in self.asks:
            return self
        return Doubt(str(self), question=self.question, asks=(*self.asks, (sentence, subject)))


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
    needs: frozenset[Need] = frozenset()
    reads_answer: bool = True  # False: judges the tool calls or the conversation only
    authored: bool = True  # may be named in a case's `assert:` list
    label: Callable[[Any], str] | None = None
    reads: Reads = None
    names_tool: bool = False  # its `value` is a model tool, which the item must be offered

    @property
    def needs_judge(self) -> bool:
        return self.ask is not None

    @property
    def needs_evidence(self) -> bool:
        """The executor fetches every cited document before the checks run."""
        return "documents" in self.needs

    def language(self, args: Any) -> str | None:
        """The language whose words this check reads with these arguments."""
        return self.reads(args) if callable(self.reads) else self.reads


CHECKS: dict[str, CheckKind] = {}


def authored() -> dict[str, CheckKind]:
    """The kinds a case file's `assert:` may name."""
    return {k: v for k, v in CHECKS.items() if v.authored}


def authored_models() -> tuple[type[BaseModel], ...]:
    """Each kind `assert:` may name, as one entry of that list writes it: the kind's argument
    model with `kind: <its name>` beside the arguments. Their union, discriminated by `kind`, is
    the JSON Schema of an `assert:` entry (evals/load/cases.py); the loader validates the same
    arguments with the same models."""
    models = []
    for name, kind in authored().items():
        written: Any = Literal[name]
        models.append(create_model(
            "".join(w.title() for w in name.split("_")), __base__=kind.args,
            __config__=ConfigDict(title=name), __doc__=kind.args.__doc__, __module__=__name__,
            kind=(written, ...)))
    return tuple(models)


def _register(kind: CheckKind) -> None:
    if kind.kind in CHECKS:
        raise ValueError(f"check kind {kind.kind!r} is registered twice")
    unknown = sorted(set(kind.needs) - set(NEEDS))
    if unknown:
        raise ValueError(f"check {kind.kind!r}: unknown needs {unknown}; known: {list(NEEDS)}")
    if not (isinstance(kind.args, type) and issubclass(kind.args, BaseModel)):
        raise TypeError(f"check {kind.kind!r}: args must be a pydantic model class")
    CHECKS[kind.kind] = kind


def assertion(
    kind: str, *, args: type[BaseModel] = NoArgs, needs: frozenset[Need] = frozenset(),
    reads_answer: bool = True, authored: bool = True, reads: Reads = None,
    names_tool: bool = False, label: Callable[[Any], str] | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Register a structural check under `kind`; validated here so a mistake fails at import.
    A check that reads the answer fails a blank answer before it runs: saying nothing is never
    grounded. A check that reads a language's words is UNDECIDED on an answer in another."""

    def wrap(fn: CheckFn) -> CheckFn:
        if inspect.iscoroutinefunction(fn) or len(inspect.signature(fn).parameters) != 3:
            raise TypeError(f"assertion {kind!r}: a plain function of (turn, args, fixtures)")
        entry = CheckKind(kind, args, needs=needs, reads_answer=reads_answer,
                          authored=authored, label=label, reads=reads, names_tool=names_tool)

        def check(turn: Transcript, parsed: Any, fixtures: Fixtures) -> Verdict:
            if reads_answer and not turn.answer.strip():
                return False, NO_ANSWER
            language = entry.language(parsed)
            if language is not None:
                # what the check reads: the answer, and the answer to the photos (a
                # conversation's may be another turn's)
                for text in dict.fromkeys((turn.answer, turn.photo_answer())):
                    why = unreadable(text, language) if text.strip() else None
                    if why is not None:
                        return None, why
            return fn(turn, parsed, fixtures)

        _register(replace(entry, check=check))
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


def measured(kind: str, *, args: type[BaseModel], label: Callable[[Any], str],
             needs: frozenset[Need] = frozenset()) -> Callable[[MeasureFn], MeasureFn]:
    """Register a measured check under `kind`: a plain function of (attempt, args). Measured
    kinds are built from an item's own keys (`max_latency_s`, `max_cost`), never named in
    `assert:`."""

    def wrap(fn: MeasureFn) -> MeasureFn:
        if inspect.iscoroutinefunction(fn) or len(inspect.signature(fn).parameters) != 2:
            raise TypeError(f"measured check {kind!r}: a plain function of (attempt, args)")
        _register(CheckKind(kind, args, measure=fn, reads_answer=False, authored=False,
                            label=label, needs=needs))
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


def unseen(kind: CheckKind, transcript: Transcript) -> str | None:
    """Why this check cannot see what it needs in this transcript (an endpoint hides the
    tool calls), or None."""
    hidden = sorted(set(kind.needs) & set(transcript.unseen))
    if not hidden:
        return None
    return (f"needs {' and '.join(NEED_WORDS[n] for n in hidden)}, which this transcript"
            f" does not show ({transcript.unseen_why or 'not recorded'})")


async def run_checks(specs: tuple[CheckSpec, ...], transcript: Transcript, fixtures: Fixtures,
                     judge: JudgeSetup | None, about: About) -> list[CheckResult]:
    """Every check of an item on one transcript, in the item's order. A structural check that
    raises is recorded as that check's error, never the run's end (pydantic_evals does the
    same); a judged check records its judge's failures itself. A structural check that cannot
    see what it needs, or cannot decide, is undecided with the reason; one it can settle by a
    narrow question goes to a judge trusted for that question (evals/checks/settle.py)."""
    results = []
    for spec in specs:
        kind = CHECKS[spec.kind]
        if kind.measure is not None:  # the attempt is not finished yet: measure_checks
            continue
        if kind.ask is not None:
            results.append(await kind.ask(spec, transcript, judge, about))
            continue
        assert kind.check is not None
        blind = unseen(kind, transcript)
        if blind is not None:
            results.append(CheckResult(kind=spec.describe(), passed=False, decided=False,
                                       reason=blind, required=spec.required))
            continue
        try:
            passed, reason = kind.check(transcript, spec.args, fixtures)
        except Exception as exc:
            results.append(CheckResult(kind=spec.describe(), passed=False, error=True,
                                       required=spec.required,
                                       reason=f"the check raised {type(exc).__name__}: {exc}"))
            continue
        result = CheckResult(kind=spec.describe(), passed=bool(passed), reason=str(reason),
                             decided=passed is not None, required=spec.required)
        if passed is None and isinstance(reason, Doubt):
            result = await settle(result, reason, transcript, judge)
        results.append(result)
    return results


def structural_only(specs: tuple[CheckSpec, ...]) -> tuple[CheckSpec, ...]:
    return tuple(s for s in specs if not CHECKS[s.kind].needs_judge)


def needs_evidence(specs: tuple[CheckSpec, ...]) -> bool:
    return any(CHECKS[s.kind].needs_evidence for s in specs)
