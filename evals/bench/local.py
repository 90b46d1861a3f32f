"""Benchmark the whole suite on the embedded local model(s).

    python -m evals.bench.local [--models qwen2.5-coder-1.5b-instruct,qwen2.5-coder-0.5b-instruct]
                                [--cases FILES] [--artifacts DIR] [--runs 2] [--cold]
                                [--temperature 0]

For each model: runs `python -m evals` in a child process with LOCAL_MODEL set (`--runs`
times in a row, to see what a second run with no change costs; `--cold` empties the model's
saved prompt prefixes first), samples the RSS of that process and its children (the model
server included) for the peak, then reads the run's artifact. Prints wall time, CPU time,
per-attempt latency p50/p95, tokens (and how many prompt tokens came from llama.cpp's cache),
time in prefill and in generation (the chat model's calls, and the server's own counters over
every job: chat, judge and visitor), the prefix cache's restores and saves, peak RAM and the
totals. The runs are at MODEL_TEMPERATURE 0 by default, so two runs can give the same answers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from app.localmodel.assemble import DEFAULT_LOCAL_MODEL, MODELS
from app.localmodel.server import prefix_cache_folder
from app.settings import get_settings
from evals.record.artifact import read_run
from evals.report.console import totals_line


def _tree_rss(pid: int) -> int:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def bench(model: str, extra_args: list[str], keep: Path | None, label: str = "",
          temperature: str = "0") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        artifact = (keep or Path(tmp)) / f"{model}{label}.json"
        env = {k: v for k, v in os.environ.items()
               if k not in ("EVAL_MODEL", "MODEL_CHAT", "MODEL_API_BASE")}
        env["LOCAL_MODEL"] = model
        env["EVAL_CACHE"] = "off"  # the model's speed is measured: every call is made
        if temperature:
            env["MODEL_TEMPERATURE"] = temperature
        started = time.perf_counter()
        cpu_before = _children_cpu()
        child = subprocess.Popen([sys.executable, "-m", "evals", "run", "--artifact",
                                  str(artifact), *extra_args], env=env,
                                 stdout=subprocess.PIPE, text=True)
        peak = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.5):
                peak = max(peak, _tree_rss(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        assert child.stdout is not None
        output = child.stdout.read()
        code = child.wait()
        cpu = _children_cpu() - cpu_before
        done.set()
        sampler.join()
        wall = time.perf_counter() - started
        if not artifact.exists():
            print(f"{model}: the run produced no artifact (exit {code})")
            return
        record = read_run(artifact)
    attempts = [a for c in record.cases for a in c.attempts]
    latencies = sorted(a.latency_ms / 1000 for a in attempts) or [0.0]
    used = {k: sum(getattr(a.usage, k) for a in attempts)
            for k in ("prompt_tokens", "completion_tokens", "cached_tokens", "prefill_ms",
                      "generation_ms", "cut_at_cap")}
    q = statistics.quantiles(latencies, n=20) if len(latencies) >= 2 else latencies * 19
    cache = next((line for line in output.splitlines() if line.startswith("prefix cache:")),
                 "prefix cache: (no line)")
    served = next((line for line in output.splitlines()
                   if line.startswith("local model: served")), "")
    print(f"== {model}{label}")
    print(f"wall {wall / 60:.1f} min · CPU {cpu / 60:.1f} min · {len(attempts)} attempts ·"
          f" latency per attempt p50 {statistics.median(latencies):.1f} s, p95 {q[18]:.1f} s")
    print(f"tokens: {used['prompt_tokens']} prompt ({used['cached_tokens']} from llama.cpp's"
          f" cache), {used['completion_tokens']} completion · prefill"
          f" {used['prefill_ms'] / 60000:.1f} min, generation"
          f" {used['generation_ms'] / 60000:.1f} min (the chat model's calls) · replies cut"
          f" at the cap: {used['cut_at_cap']}")
    print(f"{cache} · peak RAM (runner + model server) {peak / 2**30:.2f} GiB")
    if served:
        print(served)
    print(f"{totals_line(record.cases)} (exit {code})")


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the run and its model server)."""
    times = os.times()
    return times.children_user + times.children_system


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench.local")
    p.add_argument("--models", default=DEFAULT_LOCAL_MODEL)
    p.add_argument("--cases", help="EVAL_CASES for a shorter run")
    p.add_argument("--artifacts", type=Path,
                   help="keep each model's run artifact as DIR/<model>.json")
    p.add_argument("--runs", type=int, default=1, help="runs in a row per model (2: a cold"
                   " run, then one with no change)")
    p.add_argument("--cold", action="store_true",
                   help="empty the model's saved prompt prefixes before the first run")
    p.add_argument("--temperature", default="0",
                   help="MODEL_TEMPERATURE for the runs ('' for the providers' defaults)")
    args = p.parse_args()
    extra = ["--cases", args.cases] if args.cases else []
    if args.artifacts:
        args.artifacts.mkdir(parents=True, exist_ok=True)
    for model in args.models.split(","):
        if args.cold:
            _empty_prefix_cache(model.strip())
        for n in range(1, args.runs + 1):
            bench(model.strip(), extra, args.artifacts, f" (run {n} of {args.runs})"
                  if args.runs > 1 else "", args.temperature)


def _empty_prefix_cache(model: str) -> None:
    folder = prefix_cache_folder(Path(get_settings().data_dir), MODELS[model])
    shutil.rmtree(folder, ignore_errors=True)
    print(f"emptied {folder}")


if __name__ == "__main__":
    main()
