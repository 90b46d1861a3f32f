"""An item's result: its attempts, each tried again as the same attempt when a provider lost
it, a second attempt only after a failed one, and the status they classify to (the statuses
are defined in evals/record/results.py)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable

from app.chat.retry import retry_wait_s
from evals.execute.attempt import attempt
from evals.execute.executors import Setup
from evals.execute.lost import NOT_RETRIED, PROVIDER_REATTEMPTS
from evals.judge.setup import JudgeSetup
from evals.load.items import EvalItem
from evals.record.results import Attempt, CaseResult, classify

MAX_ATTEMPTS = 2  # one retry


async def same_attempt(make: Callable[[], Awaitable[Attempt]]) -> Attempt:
    """One attempt; a try lost to the chat model's call is tried again as the same attempt,
    after waiting what the provider asked (Retry-After, capped) or a back-off. One still lost
    after PROVIDER_REATTEMPTS says so in its error. A judge's or visitor's lost call was tried
    again in place already (lost.py): its attempt is not run again."""
    lost: list[str] = []
    result = await make()
    for n in range(1, PROVIDER_REATTEMPTS + 1):
        if not result.lost_to_provider or result.failure in NOT_RETRIED or \
                result._tries_spent:
            break
        lost += [*result.lost_to, result.error or result.failure or ""]
        await asyncio.sleep(retry_wait_s(result._retry_after_s, n))
        result = await make()
    if result.lost_to_provider and not result._tries_spent:
        tries = len(lost) + 1
        result = result.model_copy(update={
            "error": f"lost to the provider after {tries} tr{'ies' if tries > 1 else 'y'} of"
                     f" this attempt (not a check failure): {result.error}"})
    return result.model_copy(update={"lost_to": [*lost, *result.lost_to]}) if lost else result


async def with_one_retry(make: Callable[[int], Awaitable[Attempt]]) -> list[Attempt]:
    """One attempt, and a second only when the first failed a check or broke (up to
    MAX_ATTEMPTS); an undecided attempt is not retried, since a retry cannot make its judge
    trusted, and neither is one the guard refused or one lost to the provider (it was already
    tried again as the same attempt: a second attempt would count it as a flake). `make` is
    given the attempt's number."""
    attempts = [await same_attempt(functools.partial(make, 1))]
    while not (attempts[-1].passed or attempts[-1].undecided
               or attempts[-1].failure is not None) and len(attempts) < MAX_ATTEMPTS:
        attempts.append(await same_attempt(functools.partial(make, len(attempts) + 1)))
    return attempts


def result_of(item: EvalItem, repetition: int, **fields: object) -> CaseResult:
    """The item's result in this repetition, with `fields` (its status, its attempts or why
    it was skipped)."""
    return CaseResult(id=item.id, file=item.file, prompt=item.prompt, group=item.group,
                      attack=item.attack, context=item.context.key,
                      repetition=repetition, **fields)  # type: ignore[arg-type]


async def run_item(item: EvalItem, setup: Setup, judge: JudgeSetup | None = None, *,
                   repetition: int = 1, executor: str | None = None,
                   run_id: str | None = None) -> CaseResult:
    """One repetition of an item: its attempts, tried again as above, and their status."""
    attempts = await with_one_retry(lambda n: attempt(item, setup, judge, executor,
                                                      repetition=repetition, number=n,
                                                      run_id=run_id))
    return result_of(item, repetition, status=classify(attempts), attempts=attempts)
