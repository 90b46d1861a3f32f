"""Benchmark the eval runner on the real path against a fake model server.

    python -m evals.bench.runner [--cases 200] [--concurrency 50] [--latency-ms 200] [--scale]

The fake model server (evals/bench/fake_model.py) runs in its own process on 127.0.0.1, so
its CPU stays out of the figures; it counts requests in flight and can inject faults. Each
synthetic case goes through the real path (compose_chat, the tool set, run_turn, the wire
transport, the checks, the run store) and needs one model call. It prints:

- start-up to the first model request of a one-case `python -m evals run` (a child process:
  imports, database, fixtures and all);
- for N cases at concurrency C: wall, the span from first to last request against the ideal
  (ceil(N/C) × latency), mean requests in flight ÷ C, CPU ms per case, peak RSS;
- a fault storm (30% 429 with Retry-After 0, 10% 500, 5% requests that hang past the
  timeout): how many cases each status got, the ERRORs, wall time;
- with --scale, 5,000 cases × 2 repetitions at concurrency 200: wall and peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from app.chat.openai_wire import OpenAICompatModel, close_clients
from app.db import scratch_database
from app.embed import HashEmbedder
from app.settings import get_settings
from evals.bench.fake_model import FakeModelProcess, Faults
from evals.checks import CHECKS, CheckSpec
from evals.execute.env import eval_env
from evals.execute.session import Prepared, Version, run_versions
from evals.load.cases import Case
from evals.load.plan import plan_info
from evals.record.run import Models, RunSettings
from evals.record.store import RunStore
from evals.settings import PROJECT_ROOT, conninfo


def bench_cases(n: int) -> list[Case]:
    checks = (CheckSpec("not_called_tool", CHECKS["not_called_tool"].args.model_validate(
        {"value": "read_page"}), 1), CheckSpec("no_unknown_tools",
                                               CHECKS["no_unknown_tools"].args(), 1))
    return [Case(id=f"bench-{i}", file="bench.yaml", line=i,
                 prompt=f"Which machine should I use for job {i}?", checks=checks)
            for i in range(n)]


def startup(server: FakeModelProcess) -> float:
    """Seconds from spawning a one-case `python -m evals run` to its first model request."""
    server.reset()
    env = {**os.environ, "MODEL_CHAT": "openai/fake", "MODEL_API_BASE": server.base,
           "OPENAI_API_KEY": "bench", "EVAL_CACHE": "off"}  # a replay makes no first request
    with tempfile.TemporaryDirectory() as tmp:
        started = time.time()
        subprocess.run([sys.executable, "-m", "evals", "run", "--cases", "no-glowforge",
                        "--artifact", str(Path(tmp) / "run.json")], env=env,
                       capture_output=True, timeout=300, cwd=PROJECT_ROOT)
    return float(server.stats()["first_wall"]) - started


class Counted(OpenAICompatModel):
    """The wire model, counting its calls in flight over time: the runner's own view, which
    leaves out the fake server's time to read a request and write its answer."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.in_flight = 0
        self.area = 0.0
        self.first: float | None = None
        self.last: float | None = None

    def _account(self, delta: int) -> None:
        now = time.perf_counter()
        if self.last is not None:
            self.area += self.in_flight * (now - self.last)
        self.first = now if self.first is None else self.first
        self.last = now
        self.in_flight += delta

    async def complete(self, *args: Any, **kw: Any) -> Any:
        self._account(+1)
        try:
            return await super().complete(*args, **kw)
        finally:
            self._account(-1)

    def mean_in_flight(self) -> float:
        span = (self.last or 0) - (self.first or 0)
        return self.area / span if span else 0.0


async def throughput(server: FakeModelProcess, n: int, concurrency: int, *, repeat: int = 1,
                     timeout_s: float = 60, retries: int = 0) -> dict[str, Any]:
    """N cases (× repeat) through the real path with the run store, in this process."""
    settings = get_settings()
    server_info = conninfo(settings)
    model = Counted("openai/fake", api_base=server.base, api_key="bench",
                    timeout_s=timeout_s, retries=retries)
    cases = bench_cases(n)
    async with scratch_database(server_info, prefix="bench_store") as info, \
            RunStore.open(info) as store, eval_env(server_info, settings, HashEmbedder()) as env:
        server.reset()
        plan = plan_info(cases, judge_model=None, judge_prompt_hash=None, repeat=repeat)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        records = await run_versions(Prepared(env, store, settings), cases,
                                     [Version("current", model)], plan,
                                     settings=RunSettings(concurrency=concurrency),
                                     models=Models(), vision=None, judge=None)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    await close_clients()
    results = records["current"].cases
    return {"wall": wall, "cpu": cpu, "results": results, "server": server.stats(),
            "client_in_flight": model.mean_in_flight(),
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def report_throughput(label: str, n: int, concurrency: int, latency_s: float,
                      got: dict[str, Any]) -> None:
    ideal = math.ceil(n / concurrency) * latency_s
    stats = got["server"]
    statuses = Counter(r.status for r in got["results"])
    print(f"{label}: N={n} C={concurrency} · {dict(statuses)} · {stats['requests']} requests")
    print(f"  wall {got['wall']:.2f} s · span {stats['span_s']:.2f} s = "
          f"{stats['span_s'] / ideal:.2f} × ideal ({ideal:.2f} s) · in flight"
          f" {stats['mean_in_flight']:.1f} = {stats['mean_in_flight'] / concurrency:.0%} of C"
          f" at the server, {got['client_in_flight'] / concurrency:.0%} in the runner's calls"
          f" · CPU {got['cpu'] / len(got['results']) * 1000:.1f} ms per case"
          f" · peak RSS {got['rss_mib']:.0f} MiB")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench.runner")
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--latency-ms", type=float, default=200)
    p.add_argument("--scale", action="store_true", help="also 5,000 cases × 2 at C=200")
    args = p.parse_args()
    latency = args.latency_ms / 1000
    with FakeModelProcess(latency) as server:
        print(f"start-up to the first model request (one case, a fresh process):"
              f" {startup(server):.2f} s")
        one = asyncio.run(throughput(server, 1, 1))
        report_throughput("one case", 1, 1, latency, one)
        many = asyncio.run(throughput(server, args.cases, args.concurrency))
        report_throughput("many cases", args.cases, args.concurrency, latency, many)
    with FakeModelProcess(latency, faults=Faults(0.30, 0.10, 0.05, 3.0)) as storm:
        got = asyncio.run(throughput(storm, args.cases, args.concurrency, timeout_s=1.0,
                                     retries=4))
        statuses = Counter(r.status for r in got["results"])
        print(f"fault storm (30% 429, 10% 500, 5% hangs past a 1 s timeout; 4 retries):"
              f" {dict(statuses)} · {statuses.get('ERROR', 0)} ERROR · wall {got['wall']:.1f} s"
              f" · {got['server']['requests']} requests")
    if args.scale:
        with FakeModelProcess(latency) as server:
            got = asyncio.run(throughput(server, 5000, 200, repeat=2))
            report_throughput("scale (5,000 × 2)", 10_000, 200, latency, got)


if __name__ == "__main__":
    main()
