"""Model calls lost to the provider (after the client's own retries): how many tries an
attempt gives them, and a judge's or simulated visitor's call asked again in its place.

The chat model's lost call is tried again by running its attempt again (retries.py). A
judge's or visitor's call is not: what it is asked about (the answer, the conversation so far)
is already there, so it is asked again as it was, in the same attempt, after waiting what the
provider asked (Retry-After, capped) or a back-off; the chat model is not asked again for it.
Each call gets PROVIDER_REATTEMPTS more tries, as an attempt does. One still lost after them
is recorded for the attempt (`Losses.final`), which becomes an ERROR that names whose call it
was and what the provider said: a provider's failure, never a check's, so never a FLAKY or a
FAIL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from app.chat.declared import Wrapping
from app.chat.models import ChatModel
from app.chat.reply import ModelReply
from app.chat.retry import FailureKind, ModelCallError, retry_wait_s
from evals.record.results import NOT_CALLED

# Tries of one attempt, or of a judge's or visitor's call, lost to provider errors (after the
# model's own retries) before it is given up as an ERROR. A guard's refusal (NOT_CALLED) and a
# request the provider refused are not tried again: neither would answer otherwise.
PROVIDER_REATTEMPTS = 1
NOT_RETRIED = (*NOT_CALLED, "refused")


class LostCall(ModelCallError):
    """A judge's or visitor's call the provider still lost after the tries of its attempt."""

    def __init__(self, role: str, said: str, kind: FailureKind, tries: int) -> None:
        super().__init__(f"lost to the provider after {tries} tr{'ies' if tries > 1 else 'y'}"
                         f" of this attempt (not a check failure): {said}")
        self.role = role
        self.kind = kind
        self.tries = tries


@dataclass
class Losses:
    """One attempt's judge and visitor calls lost to the provider: each try lost and asked
    again, and the call still lost after its tries, if one was."""

    asked_again: list[str] = field(default_factory=list)
    final: LostCall | None = None


_LOSSES: ContextVar[Losses | None] = ContextVar("provider_losses", default=None)


@contextmanager
def losses() -> Iterator[Losses]:
    """Collect the lost calls of the attempt that runs inside the block."""
    lost = Losses()
    token = _LOSSES.set(lost)
    try:
        yield lost
    finally:
        _LOSSES.reset(token)


class AskedAgain(Wrapping):
    """A judge's or visitor's model (`role`) whose call lost to the provider is asked again in
    place, as the same attempt; still lost, it raises LostCall and says so to the attempt."""

    def __init__(self, model: ChatModel, role: str) -> None:
        self.model = model
        self.model_id = model.model_id
        self.role = role

    async def complete(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **kw: Any) -> ModelReply:
        tries = 0
        while True:
            try:
                return await self.model.complete(messages, tools, **kw)
            except ModelCallError as exc:
                kind: FailureKind = exc.kind or "unreadable"
                if kind in NOT_CALLED:  # the guard's refusal: not the provider's failure
                    raise
                tries += 1
                said = self._said(exc)
                lost = _LOSSES.get()
                if kind in NOT_RETRIED or tries > PROVIDER_REATTEMPTS:
                    final = LostCall(self.role, said, kind, tries)
                    if lost is not None and lost.final is None:
                        lost.final = final
                    raise final from exc
                if lost is not None:
                    lost.asked_again.append(said)
                await asyncio.sleep(retry_wait_s(getattr(exc, "retry_after_s", None), tries))

    def _said(self, exc: ModelCallError) -> str:
        """Whose call it was and what the provider said (its model id said once)."""
        what = str(exc).removeprefix(f"{self.model_id}: ")
        return f"the {self.role}'s call ({self.model_id}): {what}"
