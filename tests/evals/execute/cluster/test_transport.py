"""Ray's transport keeps the run's own Ctrl-C and SIGTERM: Ray's start-up (`ray.init`)
installs a SIGTERM handler that exits at once (ray/_private/worker.py and node.py), and a
`--ray` driver stopped that way was aborted, its run left `running`. Ray here is a stand-in
that does only that, so the handlers are tested in this process; that a real instance's
start-up leaves the run's own SIGTERM handler in place is held in test_driver.py's one test on
real Ray."""

import asyncio
import os
import signal
import sys

import pytest

from app.settings import Settings
from evals.api.progress import stop_on_signals
from evals.execute.cluster import ClusterPlan, RayTransport
from evals.execute.cluster.transport import RayStartStopped


class RayStartingUp:
    """`ray` as far as signals go: init installs Ray's SIGTERM handler (sys.exit, as Ray's
    does), and `signalled` sends SIGTERM while it starts."""

    def __init__(self, signalled: bool = False,
                 takes: tuple[signal.Signals, ...] = (signal.SIGTERM,)) -> None:
        self.signalled = signalled
        self.takes = takes
        self.up = False
        self.shutdowns = 0

    def is_initialized(self) -> bool:
        return self.up

    def init(self, **_: object) -> None:
        def sigterm_handler(signum, frame):
            sys.exit(signum)

        for sig in self.takes:
            signal.signal(sig, sigterm_handler)
        if self.signalled:
            os.kill(os.getpid(), signal.SIGTERM)
        self.up = True

    def shutdown(self) -> None:
        self.up = False
        self.shutdowns += 1


def ray_transport(ray: RayStartingUp) -> RayTransport:
    transport = RayTransport()
    transport.ray = ray
    return transport


PLAN = ClusterPlan(address="local:1", settings=Settings(), local_model=False, server="",
                   refs={})


async def test_a_sigterm_once_ray_has_started_goes_to_the_run_s_own_handler():
    stop = asyncio.Event()
    ray = RayStartingUp()
    with stop_on_signals(stop) as got:
        with ray_transport(ray).connected(PLAN):
            os.kill(os.getpid(), signal.SIGTERM)  # Ray's handler would exit here
            await asyncio.wait_for(stop.wait(), 5)
    assert got["signal"] == signal.SIGTERM and ray.shutdowns == 1


async def test_a_ctrl_c_once_ray_has_started_goes_to_the_run_s_own_handler():
    # Ray leaves Ctrl-C alone; a start-up that took it would not keep it either.
    stop = asyncio.Event()
    ray = RayStartingUp(takes=(signal.SIGTERM, signal.SIGINT))
    with stop_on_signals(stop) as got:
        with ray_transport(ray).connected(PLAN):
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.wait_for(stop.wait(), 5)
    assert got["signal"] == signal.SIGINT and ray.shutdowns == 1


async def test_a_sigterm_while_ray_starts_shuts_ray_down_and_stops_the_run():
    stop = asyncio.Event()
    ray = RayStartingUp(signalled=True)
    with stop_on_signals(stop) as got:
        with pytest.raises(RayStartStopped, match="SIGTERM while Ray was starting"):
            with ray_transport(ray).connected(PLAN):
                pytest.fail("the run went on after its stop")
        await asyncio.wait_for(stop.wait(), 5)  # the signal reached the run's handler
        assert got["signal"] == signal.SIGTERM
    assert ray.shutdowns == 1 and not ray.up


async def test_a_run_stopped_while_ray_starts_ends_with_nothing_run(capsys):
    from evals.execute.cluster import run_on_cluster
    from evals.execute.runner import Variant
    from tests.evals.execute.helpers import cases
    from tests.fakes import ScriptedModel

    stop = asyncio.Event()
    model = ScriptedModel()
    with stop_on_signals(stop) as got:
        there = await run_on_cluster(PLAN, None, cases("no-glowforge"), [Variant("run", model)],
                                     stop=stop, transport=ray_transport(RayStartingUp(True)))
        await asyncio.sleep(0.1)  # the loop hands the signal to the run's handler
    assert there == {"run": []} and stop.is_set() and got["signal"] == signal.SIGTERM
    assert model.requests == []
    assert "ray: SIGTERM while Ray was starting" in capsys.readouterr().err
