"""What stands between the runner and a model endpoint: a concurrency that backs off on rate
limits, a circuit breaker for an endpoint that is down, a cost cap, and a stop for an
interrupted run.

- On each 429 (seen by the model's own retry loop) the number of calls in flight halves; each
  call that succeeds lets one more in again, up to the run's concurrency.
- After BREAKER_AFTER consecutive calls that could not connect, no further call is made: every
  one fails at once with "endpoint unreachable: …", so a run against a dead endpoint finishes
  in seconds, not after every case's retries.
- With a cost cap, once the calls' known cost reaches it no new call is made.
- Once the run is told to stop (Ctrl-C, SIGTERM), no new call is made.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from app.chat.model_info import price_per_token
from app.chat.retry import ProviderError

BREAKER_AFTER = 5


class NotCalled(ProviderError):
    """A call the guard refused to make: the run stopped, the cost cap, or a dead endpoint."""


class AdaptiveLimit:
    """A first-come, first-served semaphore whose size shrinks on rate limits and grows back
    on success. A release wakes only the waiters that now fit, not every waiter."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self.size = self.ceiling
        self.in_flight = 0
        self.lowest = self.ceiling
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self.in_flight < self.size and not self._waiters:
            self.in_flight += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release()  # granted, then cancelled before it ran: hand the place on
            elif granted in self._waiters:
                self._waiters.remove(granted)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.size:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def shrink(self) -> None:
        self.size = max(1, self.size // 2)
        self.lowest = min(self.lowest, self.size)

    async def grow(self) -> None:
        if self.size < self.ceiling:
            self.size += 1
            self._wake()


class Spend:
    """A run's known cost so far, shared by every guard of the run (the chat models', the
    visitors' and the judge's), and the cap it must stay under."""

    def __init__(self, max_cost_usd: float | None = None) -> None:
        self.max_cost_usd = max_cost_usd
        self.cost_usd = 0.0

    @property
    def cap_reached(self) -> bool:
        return self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd


class CallGuard:
    """A ChatModel that guards another one (same interface)."""

    def __init__(self, model: Any, concurrency: int, *, max_cost_usd: float | None = None,
                 spend: Spend | None = None, stop: asyncio.Event | None = None,
                 breaker_after: int = BREAKER_AFTER, listen_to_retries: bool = True) -> None:
        self.model = model
        self.model_id: str = model.model_id
        self.limit = AdaptiveLimit(concurrency)
        self.spend = spend or Spend(max_cost_usd)
        self.stop = stop or asyncio.Event()
        self.breaker_after = breaker_after
        self.connection_failures = 0
        self.unreachable: str | None = None
        self.rate_limited = 0
        self.cost_usd = 0.0  # this guard's own calls
        self.cost_unknown = price_per_token(self.model_id) is None
        if listen_to_retries and hasattr(model, "on_retry"):
            model.on_retry = self._on_retry

    @property
    def max_cost_usd(self) -> float | None:
        return self.spend.max_cost_usd

    @property
    def accepts_pdf(self) -> bool:
        return bool(getattr(self.model, "accepts_pdf", False))

    @property
    def cost_cap_reached(self) -> bool:
        return self.spend.cap_reached

    def _on_retry(self, exc: BaseException) -> None:
        if isinstance(exc, ProviderError) and exc.kind == "rate_limit":
            self.rate_limited += 1
            self.limit.shrink()

    def refusal(self) -> NotCalled | None:
        if self.stop.is_set():
            return NotCalled("stopped", "the run was stopped before this call")
        if self.unreachable is not None:
            return NotCalled("unreachable", f"endpoint unreachable: {self.unreachable}")
        if self.cost_cap_reached:
            return NotCalled("cost_cap", f"cost cap reached (${self.spend.cost_usd:.4f} of"
                                         f" ${self.max_cost_usd:.4f})")
        return None

    async def complete(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
        refused = self.refusal()
        if refused is not None:
            raise refused
        async with self.limit:
            refused = self.refusal()  # it may have changed while this call waited
            if refused is not None:
                raise refused
            try:
                reply = await self.model.complete(messages, tools, **kw)
            except ProviderError as exc:
                if exc.kind == "connection":
                    self.connection_failures += 1
                    if self.connection_failures >= self.breaker_after:
                        self.unreachable = str(exc)
                else:
                    self.connection_failures = 0
                raise
        self.connection_failures = 0
        await self.limit.grow()
        prices = price_per_token(self.model_id)
        if prices is not None:
            cost = (reply.usage.prompt_tokens * prices[0]
                    + reply.usage.completion_tokens * prices[1])
            self.cost_usd += cost
            self.spend.cost_usd += cost
        return reply
