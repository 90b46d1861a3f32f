"""The run's cost cap as one budget for every worker: a Ray actor holds the run's Spend, and
each worker's guards reserve and settle through it."""

from __future__ import annotations

import asyncio
from typing import Any

from evals.execute.guard import Spend


class Budget:
    """The run's one Spend (made a Ray actor by the driver): a reservation waits here, in
    one place, for the calls in flight on every worker."""

    def __init__(self, max_cost_usd: float | None) -> None:
        self.spend = Spend(max_cost_usd)
        self.stop = asyncio.Event()

    async def reserve(self, worst_usd: float) -> tuple[bool, float, bool]:
        fits = await self.spend.reserve(worst_usd, self.stop)
        return fits, self.spend.cost_usd, self.spend.refused

    async def settle(self, worst_usd: float, cost_usd: float) -> float:
        self.spend.settle(worst_usd, cost_usd)
        return self.spend.cost_usd

    async def halt(self) -> None:
        self.stop.set()


class SharedSpend(Spend):
    """A worker's view of the run's budget: every reservation is the Budget actor's; the cost
    seen here is the whole run's as of the last answer, never only this worker's."""

    def __init__(self, budget: Any, max_cost_usd: float | None) -> None:
        super().__init__(max_cost_usd)
        self.budget = budget
        self._settling: set[asyncio.Task[None]] = set()

    async def reserve(self, worst_usd: float, stop: asyncio.Event) -> bool:
        if stop.is_set():
            return False
        fits, self.cost_usd, refused = await self.budget.reserve.remote(worst_usd)
        self.refused = self.refused or refused
        if fits:
            self.in_flight += 1
        return bool(fits)

    def settle(self, worst_usd: float, cost_usd: float) -> None:
        self.in_flight -= 1
        self.cost_usd += cost_usd  # until the budget's answer says the whole run's

        async def tell() -> None:
            self.cost_usd = await self.budget.settle.remote(worst_usd, cost_usd)

        task = asyncio.get_running_loop().create_task(tell())
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)
