"""The run's cost cap as one budget for every worker: an actor (a Ray actor) holds the run's
Spend, and each worker's guards reserve and settle through it, under the worker's name (where
the driver put it), so that what a lost worker had reserved is given back."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from evals.execute.cluster.transport import Actor
from evals.execute.guard import Spend


class Budget:
    """The run's one Spend (made an actor by the driver): a reservation waits here, in
    one place, for the calls in flight on every worker."""

    def __init__(self, max_cost_usd: float | None, spent: float = 0.0) -> None:
        self.spend = Spend(max_cost_usd)
        self.spend.cost_usd = spent  # what the command spent before the run (a calibration)
        self.stop = asyncio.Event()
        self.held: dict[str, Counter[float]] = {}  # each worker's reservations in flight

    async def reserve(self, owner: str, worst_usd: float) -> tuple[bool, float, bool]:
        fits = await self.spend.reserve(worst_usd, self.stop)
        if fits:
            self.held.setdefault(owner, Counter())[worst_usd] += 1
        return fits, self.spend.cost_usd, self.spend.refused

    async def settle(self, owner: str, worst_usd: float, cost_usd: float,
                     job: str = "chat") -> float:
        held = self.held.get(owner, Counter())
        if held[worst_usd] > 0:
            held[worst_usd] -= 1
            self.spend.settle(worst_usd, cost_usd, job)
        else:  # given back already (its worker was lost): count the cost all the same
            self.spend.add(cost_usd, job)
        return self.spend.cost_usd

    async def add(self, cost_usd: float, job: str = "chat") -> float:
        """A call with no worst case to reserve (no price, or no cap on it) still costs."""
        self.spend.add(cost_usd, job)
        return self.spend.cost_usd

    async def spent(self) -> dict[str, float]:
        """What each job spent on the workers (the spend before the run apart)."""
        return dict(self.spend.parts)

    async def release(self, owner: str) -> None:
        """Give back every reservation of a lost worker: its calls will never settle."""
        for worst, n in self.held.pop(owner, Counter()).items():
            for _ in range(n):
                self.spend.settle(worst, 0.0)

    async def halt(self) -> None:
        """The run stops: a reservation waiting for room is refused."""
        self.stop.set()


class SharedSpend(Spend):
    """A worker's view of the run's budget: every reservation is the Budget actor's; the cost
    seen here is the whole run's as of the last answer, never only this worker's."""

    def __init__(self, budget: Actor, max_cost_usd: float | None, owner: str = "") -> None:
        super().__init__(max_cost_usd)
        self.budget = budget
        self.owner = owner  # the worker's name
        self._telling: set[asyncio.Task[None]] = set()

    async def reserve(self, worst_usd: float, stop: asyncio.Event) -> bool:
        if stop.is_set():
            return False
        fits, self.cost_usd, refused = await self.budget.call("reserve", self.owner,
                                                              worst_usd)
        self.refused = self.refused or refused
        if fits:
            self.in_flight += 1
        return bool(fits)

    def settle(self, worst_usd: float, cost_usd: float, job: str = "chat") -> None:
        self.in_flight -= 1
        self.count(job, cost_usd)
        self._tell(self.budget.call("settle", self.owner, worst_usd, cost_usd, job), cost_usd)

    def add(self, cost_usd: float, job: str = "chat") -> None:
        self.count(job, cost_usd)
        self._tell(self.budget.call("add", cost_usd, job), cost_usd)

    def _tell(self, answer: Any, cost_usd: float) -> None:
        self.cost_usd += cost_usd  # until the budget's answer says the whole run's

        async def told() -> None:
            self.cost_usd = await answer

        task = asyncio.get_running_loop().create_task(told())
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)
