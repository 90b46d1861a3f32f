"""A run spread over Ray workers against fake model servers (evals/bench/fake_model.py), one
per worker, each with a fixed number of slots and a fixed time per call, so the model servers,
not the runner, bound the run: `make bench-ray`.

    python -m evals.bench.ray [--items 200] [--slots 4] [--latency-ms 200] [--workers 1,2,4]

For each worker count: a local Ray instance with that many workers, each talking to its own
server, runs the items; printed are the wall (start-up apart), throughput, the mean calls in
flight on each worker's server, Ray's start-up, and the peak memory of the driver and of each
worker. First, the same items in one process against one server (the baseline of 1 worker).
Last, a run of 2 workers in which one is killed mid-run: every item must be classified once.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from app.chat.openai_wire import OpenAICompatModel, close_clients
from app.embed import HashEmbedder
from app.settings import get_settings
from evals.bench.fake_model import FakeModelProcess
from evals.bench.runner import bench_cases
from evals.execute.cluster import ClusterPlan, Figures, run_on_cluster
from evals.execute.env import eval_env
from evals.execute.runner import Variant, run_variants
from evals.record.results import CaseResult
from evals.settings import conninfo


@contextmanager
def servers(count: int, slots: int, latency_s: float) -> Iterator[list[FakeModelProcess]]:
    """`count` fake model servers with `slots` slots each, each in its own process."""
    with ExitStack() as stack:
        yield [stack.enter_context(FakeModelProcess(latency_s, slots=slots))
               for _ in range(count)]


def _reset(fakes: list[FakeModelProcess]) -> None:
    for fake in fakes:
        fake.reset()


def _model(base: str) -> OpenAICompatModel:
    return OpenAICompatModel("openai/fake", api_base=base, api_key="bench",
                             timeout_s=60, retries=0)


async def in_process(items: list[Any], server: FakeModelProcess, slots: int) -> float:
    settings = get_settings()
    async with eval_env(conninfo(settings), settings, HashEmbedder()) as env:
        await run_variants(env, items[:slots], [Variant("run", _model(server.base))],
                           concurrency=slots)  # warm up
        server.reset()
        started = time.perf_counter()
        await run_variants(env, items, [Variant("run", _model(server.base))],
                           concurrency=slots)
        return time.perf_counter() - started


async def distributed(items: list[Any], fakes: list[FakeModelProcess], slots: int,
                      kill_after: int | None = None) -> tuple[float, Figures, list[str]]:
    """One run over a local Ray instance of len(fakes) workers; the wall from the workers
    being ready to the last item (closing the workers and Ray's shutdown apart), and what the
    driver saw."""
    settings = get_settings().model_copy(update={
        "model_chat": "openai/fake", "model_api_base": fakes[0].base,
        "openai_api_key": "bench"})
    plan = ClusterPlan(address=f"local:{len(fakes)}", settings=settings, local_model=False,
                       server=conninfo(settings), refs={"run": None},
                       model_bases=tuple(fake.base for fake in fakes))
    figures = Figures()
    finished: list[str] = []
    last = [0.0]

    async def on_done(label: str, result: CaseResult) -> None:
        last[0] = time.perf_counter()
        finished.append(result.id)
        if kill_after is not None and len(finished) == kill_after:
            figures.handles[0].kill()

    started = time.perf_counter()
    await run_on_cluster(plan, None, items, [Variant("run", _model(fakes[0].base))],
                         concurrency=slots, on_done=on_done, figures=figures)
    return last[0] - started - figures.startup_s, figures, finished


async def bench(n: int, slots: int, latency_s: float, counts: list[int]) -> None:
    items = bench_cases(n)
    print(f"{n} items · {slots} slots per model server · {latency_s * 1000:.0f} ms per call")
    with servers(max(counts), slots, latency_s) as fakes:
        base_wall = await in_process(items, fakes[0], slots)
        print(f"in one process, 1 server: wall {base_wall:.2f} s ·"
              f" {n / base_wall:.1f} items/s · {fakes[0].stats()['mean_in_flight']:.2f}"
              " calls in flight")
        print(f"{'workers':>7} {'wall s':>7} {'items/s':>8} {'× 1':>6} {'start-up s':>10}"
              f" {'in flight per worker':>24} {'driver MB':>9} {'worker MB':>22}")
        first: float | None = None
        for count in counts:
            _reset(fakes)
            wall, figures, _ = await distributed(items, fakes[:count], slots)
            rate = n / wall
            first = first or rate
            flight = " ".join(f"{fake.stats()['mean_in_flight']:.2f}" for fake in fakes[:count])
            mem = " ".join(f"{w['peak_mb']:.0f}" for w in figures.workers)
            print(f"{count:>7} {wall:>7.2f} {rate:>8.1f} {rate / first:>6.2f}"
                  f" {figures.startup_s:>10.1f} {flight:>24} {figures.driver_peak_mb:>9.0f}"
                  f" {mem:>22}")
        _reset(fakes)
        wall, figures, finished = await distributed(items, fakes[:2], slots,
                                                    kill_after=n // 4)
        once = sorted(finished) == sorted(i.id for i in items)
        print(f"2 workers, one killed after {n // 4} items: {len(finished)} of {n} items"
              f" classified, {'each once' if once else 'NOT each once'}; lost:"
              f" {', '.join(figures.lost) or 'none'}; wall {wall:.2f} s")
    await close_clients()
    print(f"driver peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"
          " MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench.ray")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args(argv)
    asyncio.run(bench(args.items, args.slots, args.latency_ms / 1000,
                      [int(w) for w in args.workers.split(",")]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
