"""What stands between the runner and a model endpoint: a concurrency that backs off on rate
limits, a circuit breaker for an endpoint that is down, a cost cap, and a stop for an
interrupted run.

- On each 429 (seen by the model's own retry loop) the number of calls in flight halves; each
  call that succeeds lets one more in again, up to the run's concurrency.
- After BREAKER_AFTER consecutive calls that could not connect, no further call is made: every
  one fails at once with "endpoint unreachable: …", so a run against a dead endpoint finishes
  in seconds, not after every case's retries.
- With a cost cap, a call first reserves its worst-case cost (every output token it may
  generate and an upper bound of its prompt's tokens, at the model's price from litellm's
  metadata) and settles its real cost when it returns. A call whose worst case does not fit
  under the cap beside what is spent and reserved waits for the calls in flight to settle,
  and is refused once nothing is in flight to free room: the spend never passes the cap, calls
  in flight included.
- Once the run is told to stop (Ctrl-C, SIGTERM), no new call is made.

One Spend is a command's budget: every guard of the command draws on it (the chat models',
the judge's, the visitor's, a first-use calibration's before the run, a drafting model's), and
it keeps what each job spent.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
from collections import deque
from typing import Any

from app.chat.declared import Wrapping
from app.chat.model_info import info, price_per_token
from app.chat.models import ChatModel
from app.chat.retry import ProviderError

BREAKER_AFTER = 5
# What a PDF part may cost beyond its bytes: providers bill a page as text plus an image of
# it (Anthropic documents 1,500-3,000 tokens a page), and a compressed page can be smaller.
PDF_PAGE_TOKENS = 3000
# Per message, what a chat template adds around its content (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 16
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


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


# The jobs a command's spend is kept under: the chat model under test, the judge, the
# simulated visitor, a judge's calibration, a drafting model.
Job = str


class Spend:
    """A command's cost so far, shared by every guard of the command (the chat models', the
    visitor's, the judge's, a calibration's), what each job spent (`parts`), the worst-case
    cost of the calls in flight, and the cap that the two together must stay under."""

    def __init__(self, max_cost_usd: float | None = None) -> None:
        self.max_cost_usd = max_cost_usd
        self.cost_usd = 0.0
        self.parts: dict[Job, float] = {}
        self.calls_refused = 0  # calls the cap kept from being made
        self.unpriced: set[str] = set()  # models called at no known price: counted as nothing
        self.reserved_usd = 0.0
        self.in_flight = 0
        self.refused = False  # a call's worst case found no room, with nothing in flight
        self._settled: asyncio.Event | None = None

    @property
    def cap_reached(self) -> bool:
        return self.max_cost_usd is not None and (self.refused
                                                  or self.cost_usd >= self.max_cost_usd)

    def fits(self, worst_usd: float) -> bool:
        return self.max_cost_usd is None or \
            self.cost_usd + self.reserved_usd + worst_usd <= self.max_cost_usd

    async def reserve(self, worst_usd: float, stop: asyncio.Event) -> bool:
        """Set `worst_usd` aside for one call; False when it cannot fit even after every call
        in flight has settled (or the run stopped while it waited)."""
        while not self.fits(worst_usd):
            if self.in_flight == 0 or stop.is_set():
                self.refused = self.refused or self.in_flight == 0
                return False
            if self._settled is None or self._settled.is_set():
                self._settled = asyncio.Event()
            settled = self._settled
            waiter = asyncio.ensure_future(settled.wait())
            stopper = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                stopper.cancel()
        self.reserved_usd += worst_usd
        self.in_flight += 1
        return True

    def add(self, cost_usd: float, job: Job = "chat") -> None:
        """The cost of a call that reserved nothing (its model has no price bound)."""
        self.cost_usd += cost_usd
        self.count(job, cost_usd)

    def settle(self, worst_usd: float, cost_usd: float, job: Job = "chat") -> None:
        """A reserved call is over: its reservation is released and its real cost counted."""
        self.reserved_usd = max(0.0, self.reserved_usd - worst_usd)
        self.in_flight -= 1
        self.cost_usd += cost_usd
        self.count(job, cost_usd)
        if self._settled is not None:
            self._settled.set()

    def count(self, job: Job, cost_usd: float) -> None:
        """What `job` spent, kept apart from the other jobs'."""
        self.parts[job] = self.parts.get(job, 0.0) + cost_usd

    def said(self) -> str:
        """What was spent, each job's part named: `$0.8200 (chat $0.4500, judge $0.3700)`."""
        parts = ", ".join(f"{job} ${usd:.4f}" for job, usd in self.parts.items() if usd)
        return f"${self.cost_usd:.4f}" + (f" ({parts})" if parts else "")


def max_output_tokens(model: ChatModel) -> int | None:
    """The most tokens one reply of the model can hold: the limit it is called with, else
    litellm's metadata for the model; None when neither says."""
    configured = model.max_tokens
    if configured is not None and configured > 0:
        return configured
    entry = info(model.model_id)
    limit = entry.get("max_output_tokens") or entry.get("max_tokens")
    return int(limit) if isinstance(limit, int | float) and limit > 0 else None


def prompt_tokens_bound(messages: list[dict[str, Any]],
                        tools: list[dict[str, Any]] | None) -> int:
    """An upper bound of a request's prompt tokens. A byte-level tokenizer's token covers at
    least one byte, so the request's UTF-8 JSON (which spells out every message, tool schema
    and base64 attachment) bounds its text; each message adds its template's markers, and
    each PDF page what a provider bills for its picture."""
    text = json.dumps([messages, tools or []], ensure_ascii=False, default=str)
    return len(text.encode()) + MESSAGE_OVERHEAD_TOKENS * len(messages) + \
        PDF_PAGE_TOKENS * sum(_pdf_pages(m) for m in messages)


def _pdf_pages(message: dict[str, Any]) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    pages = 0
    for part in content:
        data = part.get("file", {}).get("file_data", "") if isinstance(part, dict) else ""
        if isinstance(data, str) and data.startswith("data:application/pdf;base64,"):
            try:
                raw = base64.b64decode(data.partition(",")[2], validate=False)
            except (binascii.Error, ValueError):
                raw = b""
            pages += max(1, len(_PDF_PAGE.findall(raw)))
    return pages


class CallGuard(Wrapping):
    """A ChatModel that guards another one (same interface)."""

    def __init__(self, model: ChatModel, concurrency: int, *, max_cost_usd: float | None = None,
                 spend: Spend | None = None, stop: asyncio.Event | None = None,
                 breaker_after: int = BREAKER_AFTER, listen_to_retries: bool = True,
                 job: Job = "chat") -> None:
        self.model = model
        self.job = job  # what its spend is kept under
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
        if listen_to_retries:
            model.on_retry = self._on_retry

    @property
    def max_cost_usd(self) -> float | None:
        return self.spend.max_cost_usd

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
        if self.cost_cap_reached:  # spent, or a call found no room with none in flight
            return NotCalled("cost_cap", f"cost cap reached (${self.spend.cost_usd:.4f} of"
                                         f" ${self.max_cost_usd:.4f} spent)")
        return None

    def worst_case_usd(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None) -> float | None:
        """What this call can cost at most; None when its model's price is unknown (its cost
        is not counted then, never taken as 0)."""
        prices = price_per_token(self.model_id)
        if prices is None:
            return None
        ceiling = max_output_tokens(self.model)
        if ceiling is None:  # priced, but with no bound on its reply: nothing to reserve by
            return float("inf")
        return prompt_tokens_bound(messages, tools) * prices[0] + ceiling * prices[1]

    def _cap_refusal(self, worst: float) -> NotCalled:
        cap, spend = self.max_cost_usd or 0.0, self.spend
        if worst == float("inf"):
            return NotCalled("cost_cap", f"cost cap: litellm's metadata gives no output token"
                                         f" limit for {self.model_id}, so no call of it can be"
                                         " kept under the cap")
        return NotCalled("cost_cap", f"cost cap reached: this call may cost up to ${worst:.4f},"
                                     f" more than the ${max(0.0, cap - spend.cost_usd):.4f}"
                                     f" left of ${cap:.4f} (${spend.cost_usd:.4f} spent)")

    def _refused(self, refusal: NotCalled) -> NotCalled:
        if refusal.kind == "cost_cap":
            self.spend.calls_refused += 1
        return refusal

    async def complete(self, messages: list[dict[str, Any]],
                       tools: list[dict[str, Any]] | None = None, **kw: Any) -> Any:
        refused = self.refusal()
        if refused is not None:
            raise self._refused(refused)
        async with self.limit:
            refused = self.refusal()  # it may have changed while this call waited
            if refused is not None:
                raise self._refused(refused)
            worst = self.worst_case_usd(messages, tools) \
                if self.max_cost_usd is not None else None
            if worst is not None and not await self.spend.reserve(worst, self.stop):
                stopped = self.refusal() if self.stop.is_set() else None
                raise stopped or self._refused(self._cap_refusal(worst))
            cost = 0.0
            try:
                reply = await self.model.complete(messages, tools, **kw)
                cost = self._cost(reply)
            except ProviderError as exc:
                if exc.kind == "connection":
                    self.connection_failures += 1
                    if self.connection_failures >= self.breaker_after:
                        self.unreachable = str(exc)
                else:
                    self.connection_failures = 0
                raise
            finally:
                if worst is not None:
                    self.spend.settle(worst, cost, self.job)
                elif cost:
                    self.spend.add(cost, self.job)
                self.cost_usd += cost
        self.connection_failures = 0
        await self.limit.grow()
        return reply

    def _cost(self, reply: Any) -> float:
        prices = price_per_token(self.model_id)
        if prices is None:
            self.spend.unpriced.add(self.model_id)
            return 0.0
        return reply.usage.prompt_tokens * prices[0] + reply.usage.completion_tokens * prices[1]
