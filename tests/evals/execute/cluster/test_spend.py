"""The run's one budget: reservations per worker, a lost worker's given back, a stop refuses
a waiting reservation, and a worker's view tells the budget every cost."""

import asyncio

from evals.execute.cluster.spend import Budget, SharedSpend
from tests.evals.execute.cluster.fake_transport import LocalActor


async def test_a_lost_worker_s_reservations_are_given_back():
    budget = Budget(max_cost_usd=1.0)
    assert (await budget.reserve("w1", 0.6))[0]
    waiting = asyncio.create_task(budget.reserve("w2", 0.6))  # waits: 0.6 + 0.6 > 1.0
    await asyncio.sleep(0.01)
    assert not waiting.done()
    await budget.release("w1")  # w1 died: its call will never settle
    fits, cost, refused = await asyncio.wait_for(waiting, 1)
    assert fits and cost == 0.0 and not refused
    assert await budget.settle("w2", 0.6, 0.25) == 0.25
    assert await budget.settle("w1", 0.6, 0.1) == 0.35  # late: counted, nothing released twice
    assert budget.spend.reserved_usd == 0.0 and budget.spend.in_flight == 0


async def test_a_stop_refuses_a_reservation_waiting_for_room():
    budget = Budget(max_cost_usd=1.0)
    await budget.reserve("w1", 0.9)
    waiting = asyncio.create_task(budget.reserve("w2", 0.5))
    await asyncio.sleep(0.01)
    await budget.halt()
    assert (await asyncio.wait_for(waiting, 1))[0] is False


async def test_a_worker_s_view_tells_the_budget_every_cost_reserved_or_not():
    budget = LocalActor(Budget(max_cost_usd=1.0))  # an actor's shape, in this process
    one, two = SharedSpend(budget, 1.0, "w1"), SharedSpend(budget, 1.0, "w2")
    stop = asyncio.Event()
    assert await one.reserve(0.4, stop)
    one.settle(0.4, 0.3)
    two.add(0.2)  # a call with no worst case (no price bound) counts too
    await asyncio.sleep(0.01)
    assert budget.target.spend.cost_usd == 0.5
    assert await two.reserve(0.1, stop) and two.cost_usd == 0.5  # the whole run's, not its own
    stop.set()
    assert not await one.reserve(0.1, stop)


async def test_the_budget_starts_from_what_the_command_spent_and_keeps_each_jobs_part():
    budget = LocalActor(Budget(max_cost_usd=1.0, spent=0.7))  # a calibration spent 0.7
    worker = SharedSpend(budget, 1.0, "w1")
    stop = asyncio.Event()
    assert not await worker.reserve(0.4, stop)  # 0.7 + 0.4 would pass the cap
    assert await worker.reserve(0.2, stop)
    worker.settle(0.2, 0.1, "judge")
    worker.add(0.05, "visitor")
    await asyncio.sleep(0.01)
    assert await budget.call("spent") == {"judge": 0.1, "visitor": 0.05}
    assert budget.target.spend.cost_usd == 0.85
