"""How the driver reaches its workers and the run's budget: the one place a distributed run
touches Ray. The driver is given a `Transport` (Ray's by default): it joins or starts the
cluster, says where the workers go, starts an actor there, and hands back an `Actor` whose
methods are called, streamed or killed. Everything else (the shards, the phases, a lost
worker's items run again, the budget) is the driver's and the worker's own code, whatever
carries it (the tests' transport runs the workers in the driver's process)."""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Protocol

from evals.execute.cluster.plan import ClusterError, ClusterPlan

LOCAL_OBJECT_STORE_MB = 128  # a local instance's object store: results are small
MAX_CONCURRENCY = 1000  # calls one actor serves at once: a worker's shards and its halt


class Actor(Protocol):
    """An object running where the transport put it (a worker, the budget): its async
    methods, called by name."""

    def call(self, method: str, *args: Any) -> Awaitable[Any]:
        """The method's answer; sent at once, whether or not it is awaited."""
        ...

    def stream(self, method: str, *args: Any) -> AsyncIterator[Any]:
        """What an async-generator method yields, each value as it comes."""
        ...

    def kill(self) -> None:
        """Gone at once: nothing closed, every call in flight or later raises `lost`."""
        ...


class Transport(Protocol):
    """What carries a distributed run: Ray (`RayTransport`), or in the tests the same code
    in one process."""

    lost: tuple[type[BaseException], ...]  # what a call raises when its actor is gone

    def connected(self, plan: ClusterPlan) -> AbstractContextManager[None]:
        """The cluster joined (or a local one started, and stopped at the end)."""
        ...

    def places(self, plan: ClusterPlan) -> list[tuple[str, Any]]:
        """Where the workers go: a name for each place, and what `spawn` needs to go there."""
        ...

    def spawn(self, cls: type[Any], *args: Any, place: Any = None) -> Actor:
        """`cls(*args)` as an actor, at `place` (None: anywhere)."""
        ...


class RayStartStopped(ClusterError):
    """A stop (SIGTERM) came while Ray was starting: the run ends before any item is sent."""


_STOPS = (signal.SIGINT, signal.SIGTERM)


def _handlers() -> dict[signal.Signals, Any]:
    """The process's handlers of Ctrl-C and SIGTERM (the main thread's alone can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in _STOPS}


def _restore(kept: dict[signal.Signals, Any]) -> None:
    for sig, handler in kept.items():
        if handler is not None:  # None: set outside Python, nothing to put back
            signal.signal(sig, handler)


@dataclass(frozen=True)
class RayActor:
    """A Ray actor's handle (picklable: a worker is handed the budget's)."""

    handle: Any

    def call(self, method: str, *args: Any) -> Awaitable[Any]:
        return getattr(self.handle, method).remote(*args)

    async def stream(self, method: str, *args: Any) -> AsyncIterator[Any]:
        refs = getattr(self.handle, method).options(num_returns="streaming").remote(*args)
        async for ref in refs:
            yield await ref

    def kill(self) -> None:
        import ray

        # Killed, so a worker that was only unreachable calls no model for its items.
        ray.kill(self.handle, no_restart=True)


class RayTransport:
    """Ray: a worker is an actor in a process of its own on its node."""

    def __init__(self) -> None:
        # Imported on a distributed run only: `import ray` takes about a second and most runs
        # never need it; it is an optional extra (pip install -e ".[ray]").
        try:
            import ray
        except ImportError as exc:
            raise ClusterError("Ray is not installed: make eval installs it when"
                               " EVAL_RAY_ADDRESS is set, or pip install -e \".[ray]\"") from exc
        self.ray = ray
        errors = ray.exceptions
        self.lost: tuple[type[BaseException], ...] = (
            errors.RayActorError, errors.ActorDiedError, errors.ActorUnavailableError)

    @contextmanager
    def connected(self, plan: ClusterPlan) -> Iterator[None]:
        ray = self.ray
        if ray.is_initialized():  # joined already (the tests', a caller's): left as it is
            yield
            return
        # ray.init installs a SIGTERM handler of Ray's that exits at once (and, for a local
        # instance, one that kills its processes first): a run stopped that way was aborted,
        # left `running`, its database and blob folder behind. The run's own handlers (Ctrl-C
        # and SIGTERM stop it gracefully) are put back as soon as Ray has started.
        kept = _handlers()
        try:
            self._init(plan)
        except SystemExit:
            # Nothing in ray.init exits but Ray's SIGTERM handler: a stop while it started.
            with suppress(Exception):
                ray.shutdown()
            _restore(kept)
            if kept:  # the main thread's: the run's handler takes it, as if it came now
                signal.raise_signal(signal.SIGTERM)
            raise RayStartStopped("SIGTERM while Ray was starting: the run stops before any"
                                  " item is sent") from None
        except BaseException:
            _restore(kept)
            raise
        _restore(kept)
        try:
            yield
        finally:
            ray.shutdown()
            _restore(kept)

    def _init(self, plan: ClusterPlan) -> None:
        ray = self.ray
        local = plan.local_workers
        if local is not None:
            ray.init(num_cpus=local, include_dashboard=False, log_to_driver=True,
                     object_store_memory=LOCAL_OBJECT_STORE_MB << 20,
                     configure_logging=False)
        else:
            try:
                ray.init(address=plan.address, log_to_driver=True, configure_logging=False)
            except (ConnectionError, RuntimeError) as exc:
                raise ClusterError(f"--ray {plan.address}: no Ray cluster there ({exc})"
                                   ) from exc

    def places(self, plan: ClusterPlan) -> list[tuple[str, Any]]:
        """N workers on a local instance, else one on every live node. No CPU reserved: a
        worker mostly waits on its model server and its database, and an instance already
        running (the tests') may have fewer CPUs than workers."""
        local = plan.local_workers
        if local is not None:
            return [(f"worker {n + 1}", {"num_cpus": 0}) for n in range(local)]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        if not nodes:
            raise ClusterError(f"--ray {plan.address}: the cluster has no live node")
        return [(f"node {n.get('NodeManagerAddress', '?')} ({n['NodeID'][:8]})",
                 {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(
                     n["NodeID"], soft=False)}) for n in nodes]

    def spawn(self, cls: type[Any], *args: Any, place: Any = None) -> RayActor:
        remote = self.ray.remote(cls).options(max_concurrency=MAX_CONCURRENCY, **(place or {}))
        return RayActor(remote.remote(*args))
