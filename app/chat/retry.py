"""The one retry policy for every model call, whatever the transport.

Only transient failures are retried: a rate limit (429), a server error (5xx), a timeout, a
connection that failed. A request the provider refused (another 4xx) or a body that cannot be
read is not: trying it again would give the same answer. Waits are jittered exponential
back-off, except that a Retry-After the provider sent is honoured (up to RETRY_AFTER_CAP_S).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

RETRY_WAIT_MIN_S = 1.0
RETRY_WAIT_MAX_S = 20.0
RETRY_AFTER_CAP_S = 60.0

FailureKind = Literal["rate_limit", "server", "timeout", "connection", "refused", "unreadable",
                      "stopped", "unreachable", "cost_cap"]
TRANSIENT: tuple[FailureKind, ...] = ("rate_limit", "server", "timeout", "connection")


class ModelCallError(RuntimeError):
    """The provider failed (after retries, where the failure was transient)."""

    kind: FailureKind | None = None


class ProviderError(ModelCallError):
    """One failed model call, classified. `message` never includes request headers."""

    def __init__(self, kind: FailureKind, message: str, *, status: int | None = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def transient(self) -> bool:
        return self.kind in TRANSIENT


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the HTTP-date form is treated as unknown)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def retry_wait_s(retry_after_s: float | None, attempt_number: int) -> float:
    """How long to wait before try `attempt_number` + 1: what the provider asked (Retry-After,
    up to RETRY_AFTER_CAP_S), else jittered exponential back-off. Every re-try of a model call
    waits by this, the client's and the eval runner's alike."""
    if retry_after_s is not None:
        return min(max(0.0, float(retry_after_s)), RETRY_AFTER_CAP_S)
    ceiling = min(RETRY_WAIT_MAX_S, RETRY_WAIT_MIN_S * 2 ** (attempt_number - 1))
    return random.uniform(RETRY_WAIT_MIN_S / 2, ceiling)  # noqa: S311 (jitter, not secrets)


def _wait(state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    return retry_wait_s(getattr(exc, "retry_after_s", None), state.attempt_number)


def retrying(retries: int, *, transient: Callable[[BaseException], bool],
             on_retry: Callable[[BaseException], None] | None = None) -> AsyncRetrying:
    """tenacity's loop with this policy: `retries` more tries after the first."""
    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        if on_retry is not None and exc is not None:
            on_retry(exc)

    return AsyncRetrying(stop=stop_after_attempt(retries + 1), wait=_wait,
                         retry=retry_if_exception(transient), reraise=True,
                         before_sleep=before_sleep)


T = TypeVar("T")


async def call_with_retries(model_id: str, retries: int,
                            on_retry: Callable[[BaseException], None] | None,
                            call: Callable[[], Awaitable[T]]) -> T:
    """One model call under the policy: `call` raises a classified ProviderError; the error
    that ends it names the model."""
    try:
        async for attempt in retrying(
                retries, on_retry=on_retry,
                transient=lambda e: isinstance(e, ProviderError) and e.transient):
            with attempt:
                return await call()
    except ProviderError as exc:
        exc.args = (f"{model_id}: {exc.kind}: {exc.args[0]}",)
        raise
    raise AssertionError("unreachable: tenacity returns or raises")
