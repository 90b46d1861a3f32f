"""What storing and pairing add to a comparison: `make bench-compare`.

    python -m evals.bench.compare [--cases 200] [--concurrency 50] [--latency-ms 200] [--repeat 5]

Against the fake model server in its own process (evals/bench/fake_model.py), it times two
plain runs of N synthetic cases (no store, no fingerprints), then a comparison point saved and
a comparison of the same N cases × 2 versions (one of them the point's frozen agent),
interleaved, every case stored as it finishes, then paired with the McNemar test. The two
alternate for `--repeat` rounds in one process (one store); it prints wall and CPU of both per
round and the median and range of the overhead of the second over the first (targets: wall +5%,
CPU +25%).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import time

from app.chat.openai_wire import OpenAICompatModel, close_clients
from app.db import scratch_database
from app.embed import HashEmbedder
from app.settings import get_settings
from evals.bench.fake_model import FakeModelProcess
from evals.bench.runner import bench_cases
from evals.execute.agent import agent_info, agent_settings, all_contexts
from evals.execute.env import eval_env
from evals.execute.runner import run_suite
from evals.execute.session import Prepared, Version, run_versions
from evals.load.plan import plan_info
from evals.record.fingerprint import Point
from evals.record.run import Models, RunSettings
from evals.record.store import RunStore
from evals.report.compare import compare_runs
from evals.settings import conninfo


async def run(n: int, concurrency: int, base: str, repeat: int) -> None:
    settings = get_settings()
    server = conninfo(settings)
    model = OpenAICompatModel("openai/fake", api_base=base, api_key="bench",
                              timeout_s=60, retries=0)

    cases = bench_cases(n)
    t0 = time.perf_counter()
    import scipy.stats  # noqa: F401  (imported here to time it: reported apart)

    scipy_import_s = time.perf_counter() - t0
    rounds: list[tuple[float, float, float, float]] = []
    async with eval_env(server, settings, HashEmbedder()) as env, \
            scratch_database(server, prefix="bench_store") as info, RunStore.open(info) as store:
        await run_suite(env, cases[:concurrency], model, concurrency=concurrency)  # warm up
        prep = Prepared(env, store, settings)
        for n_round in range(1, repeat + 1):
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(2):
                await run_suite(env, cases, model, concurrency=concurrency)
            plain_wall, plain_cpu = time.perf_counter() - wall0, time.process_time() - cpu0

            cpu0, wall0 = time.process_time(), time.perf_counter()
            plan = plan_info(cases, judge_model=None, judge_prompt_hash=None, repeat=1)
            agent = agent_info(model.model_id, agent_settings(settings),
                               await all_contexts(env, cases))
            name = f"bench-{n_round}"
            point = Point(name=name, created=dt.datetime.now(dt.UTC).isoformat(),
                          plan=plan, agent=agent)
            await store.save_point(point)
            records = await run_versions(
                prep, cases, [Version("baseline", model, agent), Version("current", model)],
                plan, settings=RunSettings(concurrency=concurrency), models=Models(),
                vision=None, judge=None, point=name)
            comparison = compare_runs(records["baseline"], records["current"])
            await store.save_comparison(name, records["baseline"].run_id or "",
                                        records["current"].run_id or "", comparison)
            cmp_wall, cmp_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            rounds.append((plain_wall, plain_cpu, cmp_wall, cmp_cpu))
            print(f"round {n_round}: two plain runs wall {plain_wall:5.2f} s · CPU"
                  f" {plain_cpu:5.2f} s | point + stored comparison wall {cmp_wall:5.2f} s ·"
                  f" CPU {cmp_cpu:5.2f} s | overhead wall {cmp_wall / plain_wall - 1:+.1%}"
                  f" · CPU {cmp_cpu / plain_cpu - 1:+.1%}")
    await close_clients()
    print(f"{n} cases × 2 at concurrency {concurrency} against the fake model,"
          f" {repeat} round(s); {comparison.counts}")
    print(f"(importing scipy for the McNemar test, once per process: {scipy_import_s:.2f} s,"
          " not in the figures)")
    wall = sorted(r[2] / r[0] - 1 for r in rounds)
    cpu = sorted(r[3] / r[1] - 1 for r in rounds)
    print(f"overhead of storing and pairing, median (range): wall"
          f" {statistics.median(wall):+.1%} ({wall[0]:+.1%} to {wall[-1]:+.1%}), CPU"
          f" {statistics.median(cpu):+.1%} ({cpu[0]:+.1%} to {cpu[-1]:+.1%})"
          " (target: wall under +5%, CPU under +25%)")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench.compare")
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--latency-ms", type=float, default=200)
    p.add_argument("--repeat", type=int, default=5,
                   help="rounds of both, alternating (the machine's noise: median and range)")
    args = p.parse_args()
    with FakeModelProcess(args.latency_ms / 1000) as server:
        asyncio.run(run(args.cases, args.concurrency, server.base, args.repeat))


if __name__ == "__main__":
    main()
