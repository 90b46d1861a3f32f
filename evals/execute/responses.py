"""Frozen tool responses as an item runs (a case's or a scenario's `tool_responses`, format in
evals/load/responses.py). A frozen tool tries its branches in order and answers from the first
that fits the call's arguments and the item's state, else from its default; with neither it
answers the tool's error. A sequence answers in order (`exhausted: error` raises once it runs out,
`repeat_last` repeats the last), each branch counting its own calls. Expressions are rendered
with the call's arguments; `delay_s` waits before answering; `set_state` moves the item's state
when it answers, and `on_confirm` when the card it proposed is confirmed (a scenario's visitor
confirms through `FrozenResponder.confirm` first).

What the other tools do is each executor's: in a scenario a live-network tool without any answers
an error, never the network, and everything else runs for real; in a case they stay the stubs the
composition made (evals/execute/stubs.py)."""

from __future__ import annotations

from asyncio import sleep
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from app.capabilities import Tool, ToolContext, ToolError
from evals.checks.selectors import matches
from evals.load.expressions import render
from evals.load.responses import Answers, ResponseState, ToolResponses


class FrozenResponder:
    """One run of one item's frozen responses: the state, each sequence's place and the cards
    awaiting confirmation. Make one per conversation and per attempt, so each starts from the
    initial state and the first response; it serves every turn of its conversation."""

    def __init__(self, responses: Mapping[str, ToolResponses],
                 state: ResponseState | None = None) -> None:
        self.responses = responses
        self.state = state.initial if state is not None else None
        self._used: dict[tuple[str, int], int] = {}  # (tool, branch; -1 the default) -> calls
        self._cards: dict[str, str] = {}  # a frozen card's proposal id -> its on_confirm state

    def answering(self, tools: list[Tool]) -> list[Tool]:
        """Tools with frozen responses answer from them; the others are left as they are."""
        return [t.with_run(self._runner(t.name, self.responses[t.name]))
                if t.name in self.responses else t for t in tools]

    def scenario_tools(self, tools: list[Tool]) -> list[Tool]:
        """A scenario's tools: those with frozen responses answer from them; a live-network
        tool without any answers an error. Everything else runs for real."""
        return [t.with_run(_offline) if t.kind == "live_read" and t.name not in self.responses
                else t for t in self.answering(tools)]

    def confirm(self, proposal_id: str) -> dict[str, Any] | None:
        """Confirm a card a frozen response with `on_confirm` proposed: the state moves, and
        this is what the confirmation answers. None for any other card (it has no row in the
        database: the web route's code decides it, as before)."""
        target = self._cards.pop(proposal_id, None)
        if target is None:
            return None
        self.state = target
        return {"proposal_id": proposal_id, "status": "applied", "state": target}

    def _runner(self, name: str, frozen: ToolResponses) -> Any:
        async def run(ctx: ToolContext, args: BaseModel) -> Any:
            return await self._answer(name, frozen, args.model_dump(mode="json"))
        return run

    def _choose(self, frozen: ToolResponses, arguments: dict[str, Any]
                ) -> tuple[int, Answers] | None:
        for i, branch in enumerate(frozen.branches):
            if branch.state is not None and branch.state != self.state:
                continue
            if not matches(arguments, branch.arguments):
                return i, branch
        return (-1, frozen) if frozen.answers() else None

    async def _answer(self, name: str, frozen: ToolResponses, arguments: dict[str, Any]) -> Any:
        chosen = self._choose(frozen, arguments)
        if chosen is None:
            raise ToolError(f"{name} has no response for these arguments in this test")
        key, answers = chosen
        if answers.delay_s:
            await sleep(answers.delay_s)
        n = self._used.get((name, key), 0)
        self._used[(name, key)] = n + 1
        sequence = answers.sequence
        if n >= len(sequence) and answers.exhausted == "error":
            raise ToolError(f"{name} has no further response in this test")
        answer = render(sequence[min(n, len(sequence) - 1)], arguments)
        if set(answer) == {"error"}:  # a failed call changes nothing: the state stays
            raise ToolError(str(answer["error"]))
        if answers.set_state is not None:
            self.state = answers.set_state
        if answers.on_confirm is not None and isinstance(answer.get("proposal_id"), str):
            self._cards[answer["proposal_id"]] = answers.on_confirm
        return answer


async def _offline(ctx: ToolContext, args: Any) -> Any:
    raise ToolError("the web cannot be read in this test")


def answering(tools: list[Tool], responses: Mapping[str, ToolResponses],
              state: ResponseState | None = None) -> list[Tool]:
    """Tools with frozen responses answer from them (one responder: one state, sequences
    counted across every turn these tools serve); the others are left as they are."""
    return FrozenResponder(responses, state).answering(tools)
