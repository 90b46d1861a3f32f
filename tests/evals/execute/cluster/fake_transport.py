"""A transport that runs the workers and the budget in the test's own process and event loop
(tests only): the driver, the worker and the budget run their real code, only the process
boundary is faked. Each call is a task of its own, as in an actor; a killed actor's calls in
flight are cancelled and, like every later call, raise WorkerLost (Ray's RayActorError)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from evals.execute.cluster import ClusterPlan


class WorkerLost(Exception):
    """The actor's process is gone."""


_END = object()


class LocalActor:
    """An object in this process, called as an actor is (`transport.Actor`)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.dead = False
        self._calls: set[asyncio.Task[Any]] = set()

    def call(self, method: str, *args: Any) -> asyncio.Task[Any]:
        # Sent at once, as a Ray call is, whether or not it is awaited.
        return asyncio.ensure_future(self._run(getattr(self.target, method)(*args)))

    async def stream(self, method: str, *args: Any) -> AsyncIterator[Any]:
        out: asyncio.Queue[Any] = asyncio.Queue()

        async def produce() -> None:
            async for value in getattr(self.target, method)(*args):
                out.put_nowait(value)  # as Ray streams: no back-pressure

        producing = asyncio.ensure_future(self._run(produce()))
        producing.add_done_callback(lambda _: out.put_nowait(_END))
        try:
            while (value := await out.get()) is not _END:
                yield value  # what came before a kill still arrives, as Ray's objects do
            producing.result()  # the worker's own failure, or WorkerLost
        finally:
            producing.cancel()

    async def _run(self, call: Coroutine[Any, Any, Any]) -> Any:
        if self.dead:
            call.close()
            raise WorkerLost(f"{type(self.target).__name__} was killed")
        task = asyncio.current_task()
        assert task is not None
        self._calls.add(task)
        try:
            return await call
        except asyncio.CancelledError:
            if self.dead:
                raise WorkerLost(f"{type(self.target).__name__} was killed") from None
            raise
        finally:
            self._calls.discard(task)

    def kill(self) -> None:
        self.dead = True
        for task in list(self._calls):
            task.cancel()


class FakeTransport:
    """`local:N` workers in this process (`transport.Transport`); `aclose` closes what a
    killed worker had open, which a dead Ray actor's process takes with it."""

    lost: tuple[type[BaseException], ...] = (WorkerLost,)

    def __init__(self) -> None:
        self.actors: list[LocalActor] = []

    @contextmanager
    def connected(self, plan: ClusterPlan) -> Iterator[None]:
        assert plan.local_workers is not None, "the fake runs local:N workers only"
        yield

    def places(self, plan: ClusterPlan) -> list[tuple[str, Any]]:
        return [(f"worker {n + 1}", None) for n in range(plan.local_workers or 0)]

    def spawn(self, cls: type[Any], *args: Any, place: Any = None) -> LocalActor:
        actor = LocalActor(cls(*args))
        self.actors.append(actor)
        return actor

    async def aclose(self) -> None:
        for actor in self.actors:
            if actor.dead and hasattr(actor.target, "close"):
                await actor.target.close()
