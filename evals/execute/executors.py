"""One seam, several executors: each runs one item and returns an Execution (its transcript
and what running it cost); the runner retries, checks, classifies and stores without knowing
which executor ran it.

- `app`: a case's one turn through the app's own composition and tool loop.
- `endpoint`: a case's conversation sent to an OpenAI-compatible endpoint, nothing composed
  (evals/execute/endpoint.py says which cases that can check).
- `conversation`: a simulated visitor talks to the app path for several turns, writes run for
  real in a database of its own (evals/execute/conversation.py).

An item names its executor (`EvalItem.executor`); a run may send every item to another one
(endpoint mode). A new executor is a class registered here with `@executor(name)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from app.chat.loop import ToolCallRecord, run_turn
from app.chat.models import ChatModel
from app.chat.reply import Usage
from evals.checks import needs_evidence
from evals.execute.agent import apply_frozen
from evals.execute.compose import citation_evidence, compose_case
from evals.execute.env import EvalEnv
from evals.execute.responses import answering
from evals.load.cases import Case
from evals.load.items import EvalItem
from evals.record.fingerprint import FrozenContext
from evals.record.transcript import (
    AttachedManual,
    ToolCall,
    Transcript,
    Turn,
    Unseen,
    as_json,
)


@dataclass(frozen=True)
class Setup:
    """What an executor is given besides its item: the eval environment, the model under test,
    the scenarios' simulated visitor, and a comparison point's frozen contexts (if any)."""

    env: EvalEnv | None
    model: ChatModel
    visitor: ChatModel | None = None
    frozen: dict[str, FrozenContext] | None = None
    max_steps: int | None = None  # a frozen agent's own tool-step limit (None: today's setting)

    def tool_steps(self, env: EvalEnv) -> int:
        """How many tool rounds the agent is given: a frozen agent's recorded limit, else
        today's setting."""
        return self.max_steps if self.max_steps is not None else env.settings.max_tool_steps


@dataclass
class Execution:
    """An executor's output: the transcript the checks read, and what running it took."""

    transcript: Transcript
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    timings: dict[str, int] = field(default_factory=dict)  # e.g. a database clone's ms
    broke: str | None = None  # the harness failed after the model answered (kept with it)
    visitor_usage: Usage | None = None  # a simulated visitor's tokens (another model's)


class Executor(Protocol):
    async def run(self, item: EvalItem, setup: Setup) -> Execution: ...


EXECUTORS: dict[str, Executor] = {}
E = TypeVar("E", bound=type)


def executor(name: str) -> Callable[[E], E]:
    """Register an executor class under a name items and variants use."""

    def wrap(cls: E) -> E:
        if name in EXECUTORS:
            raise ValueError(f"executor {name!r} is registered twice")
        EXECUTORS[name] = cls()
        return cls

    return wrap


def tool_calls(records: list[ToolCallRecord]) -> list[ToolCall]:
    """The loop's records of tool calls as the transcript keeps them (plain JSON)."""
    return [ToolCall(name=c.name, arguments=as_json(c.arguments), result=as_json(c.result),
                     kind=c.kind, error=c.error, outcome=c.outcome)  # type: ignore[arg-type]
            for c in records]


def _case(item: EvalItem, name: str) -> Case:
    if not isinstance(item, Case):
        raise TypeError(f"the {name} executor runs cases, not {type(item).__name__}")
    return item


@executor("app")
class AppTurn:
    """A case's one turn, composed exactly as /api/chat composes it (writes and live reads
    stubbed, tools with the case's frozen responses answering from them); a comparison
    point's frozen agent is told what it was told then."""

    async def run(self, item: EvalItem, setup: Setup) -> Execution:
        case = _case(item, "app")
        env = setup.env
        if env is None:
            raise RuntimeError("the app path needs the eval environment")
        composed = await compose_case(env, case, accepts_pdf=setup.model.accepts_pdf)
        if setup.frozen is not None:
            apply_frozen(composed, setup.frozen, case.context.key)
        if case.tool_responses:  # after the frozen agent's tools: those are stubs again
            # A responder of this attempt's own: a retry starts from the initial state.
            composed.composed.tools = answering(composed.composed.tools, case.tool_responses,
                                                case.response_state)
        result = await run_turn(setup.model, composed.composed, composed.messages,
                                composed.ctx, max_steps=setup.tool_steps(env))
        transcript = Transcript(
            answer=result.answer, tool_calls=tool_calls(result.tool_calls),
            attached_manuals=[AttachedManual.model_validate(m)
                              for m in composed.composed.attached_manuals],
            qr_hints=[h.text for h in composed.composed.qr_hints],
            turns=[Turn.model_validate(m) for m in
                   [*case.history_messages(), {"role": "user", "content": case.prompt},
                    {"role": "assistant", "content": result.answer}]],
            messages=composed.messages)
        execution = Execution(transcript, result.usage, result.latency_ms)
        if needs_evidence(case.checks):
            try:
                transcript.evidence = await citation_evidence(
                    env, transcript.answer, transcript.search_results(), transcript.attached())
            except Exception as exc:  # the answer is kept; the case is an ERROR, not a FAIL
                execution.broke = f"gathering citation evidence failed: {exc}"
        return execution


# What an endpoint's reply cannot show: it returns its answer, never its tool calls.
HIDDEN: frozenset[Unseen] = frozenset({"tool_calls", "documents"})
HIDDEN_WHY = "an endpoint does not expose its tool calls"


@executor("endpoint")
class EndpointTurn:
    """A case's conversation sent as it is to an OpenAI-compatible endpoint."""

    async def run(self, item: EvalItem, setup: Setup) -> Execution:
        case = _case(item, "endpoint")
        messages = [*case.history_messages(), {"role": "user", "content": case.prompt}]
        reply = await setup.model.complete(messages)
        answer = reply.content or ""
        turns = [Turn.model_validate(m) for m in [*messages, {"role": "assistant",
                                                              "content": answer}]]
        return Execution(Transcript(answer=answer, turns=turns,
                                    messages=[dict(m) for m in messages],
                                    unseen=sorted(HIDDEN), unseen_why=HIDDEN_WHY),
                         reply.usage)
