"""Benchmark the eval runner on the real path against a fake model with a fixed latency.

    python -m evals.bench [--cases 200] [--concurrency 50] [--latency-ms 200]

The fake OpenAI-compatible server runs in its own process on 127.0.0.1 and counts requests in
flight. Each synthetic case goes through the real path (its own database, compose_chat, the
tool set, run_turn, litellm, the assertions) and needs exactly one model call. Prints wall
time, the ideal (ceil(N/C) x latency), the span from first to last model request, the mean
number of requests in flight, CPU time per case (and how much of it the litellm call takes
by itself), peak RSS and start-up time.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import resource
import subprocess
import sys
import time
from typing import Any

import httpx

T0 = time.perf_counter()

FAKE_SERVER = r'''
import asyncio, sys, time, json
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
import uvicorn
latency = float(sys.argv[2])
state = {"in_flight": 0, "first": None, "last": None, "n": 0, "area": 0.0, "t": None}
def account(now):
    if state["t"] is not None:
        state["area"] += state["in_flight"] * (now - state["t"])
    state["t"] = now
async def chat(request):
    await request.body()
    now = time.perf_counter(); account(now)
    state["in_flight"] += 1; state["n"] += 1
    state["first"] = state["first"] or now
    await asyncio.sleep(latency)
    now = time.perf_counter(); account(now)
    state["in_flight"] -= 1; state["last"] = now
    return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant",
        "content": "The lab's Form 4 and Trotec Speedy 400 can help."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
async def stats(request):
    span = (state["last"] or 0) - (state["first"] or 0)
    return JSONResponse({"requests": state["n"], "span_s": span,
                         "mean_in_flight": state["area"] / span if span else 0})
async def health(request):
    return JSONResponse({"ok": True})
app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                        Route("/stats", stats), Route("/health", health)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error",
            backlog=4096, limit_concurrency=10000)
'''


def _cases(n: int) -> list:
    from evals.assertions import ASSERTIONS
    from evals.cases import Case, Check, Context

    checks = (Check("not_called_tool", ASSERTIONS["not_called_tool"].args.model_validate(
        {"value": "read_page"}), 1), Check("no_unknown_tools",
                                           ASSERTIONS["no_unknown_tools"].args(), 1))
    return [Case(f"bench-{i}", "bench.yaml", i, f"Which machine should I use for job {i}?",
                 Context(), (), (), checks) for i in range(n)]


async def run(n: int, concurrency: int, latency_s: float, port: int) -> None:
    from app.chat.openai_wire import OpenAICompatModel
    from app.db import resolve_conninfo
    from app.manuals.embed import HashEmbedder
    from app.settings import get_settings
    from evals.harness import compose_case, eval_env
    from evals.runner import run_suite

    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as client:
        for _ in range(100):
            try:
                await client.get(f"{base}/health")
                break
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
    settings = get_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    model = OpenAICompatModel("openai/fake", api_base=f"{base}/v1", api_key="bench",
                              timeout_s=60, retries=0)

    # The bench measures the runner, not the embedder: manuals use the stand-in.
    async with eval_env(resolve_conninfo(url, settings.data_dir), settings,
                        HashEmbedder()) as env:
        startup = time.perf_counter() - T0
        cases = _cases(n)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        results = await run_suite(env, cases, model, concurrency=concurrency)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        composed = await compose_case(env, cases[0])
    async with httpx.AsyncClient() as client:
        stats = (await client.get(f"{base}/stats")).json()
    litellm_ms = await _litellm_alone(model, composed, n, concurrency)
    ideal = math.ceil(n / concurrency) * latency_s
    passed = sum(r.status == "PASS" for r in results)
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"cases {n} · concurrency {concurrency} · model latency {latency_s * 1000:.0f} ms ·"
          f" {passed} passed · {stats['requests']} model requests")
    print(f"wall {wall:.2f} s · ideal {ideal:.2f} s · span first→last request"
          f" {stats['span_s']:.2f} s ({stats['span_s'] / ideal:.2f} × ideal)")
    print(f"mean requests in flight {stats['mean_in_flight']:.1f} of {concurrency}"
          f" ({stats['mean_in_flight'] / concurrency:.0%})")
    print(f"CPU {cpu:.2f} s = {cpu / n * 1000:.1f} ms per case (compose + tools + litellm +"
          f" assertions) · peak RSS {rss_mib:.0f} MiB")
    print(f"  of which the litellm call alone: {litellm_ms:.1f} ms (the same request, {n} calls"
          f" at concurrency {concurrency}, nothing else) · the rest of the path:"
          f" {cpu / n * 1000 - litellm_ms:.1f} ms")
    print(f"start-up to the first case (imports, database, fixtures): {startup:.2f} s")


async def _litellm_alone(model: Any, case: Any, n: int, concurrency: int) -> float:
    """CPU ms per call of a case's model call by itself (same messages and tool schemas, same
    concurrency), to split the per-case figure into litellm and the rest of the path."""
    gate = asyncio.Semaphore(concurrency)
    messages = [*case.composed.system_messages(), *case.messages]
    schemas = case.composed.tool_schemas()

    async def one() -> None:
        async with gate:
            await model.complete(messages, schemas)

    cpu0 = time.process_time()
    await asyncio.gather(*(one() for _ in range(n)))
    return (time.process_time() - cpu0) / n * 1000


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m evals.bench")
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--latency-ms", type=float, default=200)
    args = p.parse_args()
    from app.web.background import free_port

    port = free_port()
    latency_s = args.latency_ms / 1000
    server = subprocess.Popen([sys.executable, "-c", FAKE_SERVER, str(port), str(latency_s)])
    try:
        asyncio.run(run(args.cases, args.concurrency, latency_s, port))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
