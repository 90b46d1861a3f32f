"""One seam, several executors: each runs one item (a case, a case sent to an endpoint, a
scenario conversation) and returns a Transcript; the runner retries, checks, classifies and
stores transcripts without knowing which executor made them.

- AppTurn: one turn through the app's own composition and tool loop (today's cases).
- EndpointTurn: the case's conversation sent to an OpenAI-compatible endpoint, nothing
  composed (evals/endpoint.py says which cases that can check).
- the scenario path (evals/scenario_run.py): a simulated visitor talks to the app path for
  several turns, writes run for real in a database of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from app.chat.loop import run_turn
from app.chat.models import ChatModel
from app.chat.reply import Usage
from evals.execute.harness import EvalEnv, citation_evidence, compose_case, history_messages
from evals.load.cases import Case
from evals.record.results import CheckResult
from evals.record.turn import RecordedTurn


@dataclass
class Transcript(RecordedTurn):
    """What an executor hands the checks: the final answer and tool calls (RecordedTurn), the
    whole conversation, what the model was sent last, usage, and any checks the executor had
    to make itself (a scenario's end state, read before its database is dropped)."""

    turns: list[dict[str, str]] = field(default_factory=list)  # role, content
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    state_checks: list[CheckResult] = field(default_factory=list)
    timings: dict[str, int] = field(default_factory=dict)  # e.g. a database clone's ms
    broke: str | None = None  # the harness failed after the model answered (kept with it)
    conversation: bool = False  # a scenario's: its turns are always kept in the record
    side_usage: dict[str, int] = field(default_factory=dict)  # tokens of other models' calls


class Executor(Protocol):
    async def run(self, env: EvalEnv | None, model: ChatModel) -> Transcript: ...


def _calls(records: list[Any]) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": c.arguments, "result": c.result, "kind": c.kind,
             "error": c.error, "outcome": c.outcome} for c in records]


@dataclass
class AppTurn:
    """A case's one turn, composed exactly as /api/chat composes it (writes stubbed)."""

    case: Case
    frozen: dict[str, Any] | None = None  # a comparison point's contexts, when set
    evidence: bool = False  # gather citation evidence (a check needs it)

    async def run(self, env: EvalEnv | None, model: ChatModel) -> Transcript:
        from evals.execute.runner import apply_frozen
        from evals.record.fingerprint import context_key

        assert env is not None, "the app path needs the eval environment"
        composed = await compose_case(env, self.case,
                                      accepts_pdf=getattr(model, "accepts_pdf", False))
        if self.frozen is not None:
            apply_frozen(composed, self.frozen, context_key(self.case))
        result = await run_turn(model, composed.composed, composed.messages, composed.ctx,
                                max_steps=env.settings.max_tool_steps)
        turns = [*history_messages(self.case), {"role": "user", "content": self.case.prompt},
                 {"role": "assistant", "content": result.answer}]
        transcript = Transcript(
            result.answer, _calls(result.tool_calls), composed.composed.attached_manuals,
            [h.text for h in composed.composed.qr_hints], turns=turns,
            messages=composed.messages, usage=result.usage, latency_ms=result.latency_ms)
        if self.evidence:
            try:
                transcript.evidence = await citation_evidence(
                    env, transcript.answer, transcript.search_results(),
                    transcript.attached_manuals)
            except Exception as exc:  # the answer is kept; the case is an ERROR, not a FAIL
                transcript.broke = f"gathering citation evidence failed: {exc}"
        return transcript


@dataclass
class EndpointTurn:
    """A case's conversation sent as it is to an OpenAI-compatible endpoint."""

    case: Case

    async def run(self, env: EvalEnv | None, model: ChatModel) -> Transcript:
        messages = [*history_messages(self.case), {"role": "user", "content": self.case.prompt}]
        reply = await model.complete(messages)
        answer = reply.content or ""
        return Transcript(answer, [], turns=[*messages, {"role": "assistant",
                                                         "content": answer}],
                          messages=messages, usage=reply.usage)
