"""Benchmark the whole suite on the embedded local model(s).

    python -m evals.bench_local [--models qwen2.5-coder-1.5b-instruct,qwen2.5-coder-0.5b-instruct]
                                [--cases FILES] [--artifacts DIR]

For each model: runs `python -m evals` in a child process with LOCAL_MODEL set, samples the
RSS of that process and its children (the model server included) for the peak, then reads the
run's artifact. Prints wall time, per-attempt latency p50/p95, tokens, peak RAM and the totals.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from app.localmodel.assemble import DEFAULT_LOCAL_MODEL
from evals.report import totals_line
from evals.results import RunRecord


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


def bench(model: str, extra_args: list[str], keep: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        artifact = (keep or Path(tmp)) / f"{model}.json"
        env = {k: v for k, v in os.environ.items()
               if k not in ("EVAL_MODEL", "MODEL_CHAT", "MODEL_API_BASE")}
        env["LOCAL_MODEL"] = model
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "evals", "run", "--artifact",
                                  str(artifact), *extra_args], env=env)
        peak = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.5):
                peak = max(peak, _tree_rss(child.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = child.wait()
        done.set()
        sampler.join()
        wall = time.perf_counter() - started
        if not artifact.exists():
            print(f"{model}: the run produced no artifact (exit {code})")
            return
        record = RunRecord.model_validate_json(artifact.read_text())
    attempts = [a for c in record.cases for a in c.attempts]
    latencies = sorted(a.latency_ms / 1000 for a in attempts)
    prompt = sum(a.usage.get("prompt_tokens", 0) for a in attempts)
    completion = sum(a.usage.get("completion_tokens", 0) for a in attempts)
    q = statistics.quantiles(latencies, n=20) if len(latencies) >= 2 else latencies * 19
    print(f"== {model}")
    print(f"wall {wall / 60:.1f} min · {len(attempts)} attempts · latency per attempt p50"
          f" {statistics.median(latencies):.1f} s, p95 {q[18]:.1f} s")
    print(f"tokens: {prompt} prompt, {completion} completion · peak RAM (runner + model"
          f" server) {peak / 2**30:.2f} GiB")
    print(f"{totals_line(record.cases)} (exit {code})")


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench_local")
    p.add_argument("--models", default=DEFAULT_LOCAL_MODEL)
    p.add_argument("--cases", help="EVAL_CASES for a shorter run")
    p.add_argument("--artifacts", type=Path,
                   help="keep each model's run artifact as DIR/<model>.json")
    args = p.parse_args()
    extra = ["--cases", args.cases] if args.cases else []
    if args.artifacts:
        args.artifacts.mkdir(parents=True, exist_ok=True)
    for model in args.models.split(","):
        bench(model.strip(), extra, args.artifacts)


if __name__ == "__main__":
    main()
