"""A fake OpenAI-compatible model server on 127.0.0.1, for the tests and the benchmarks.

One handler contract: a function from a request's JSON body to (status, payload) or
(status, payload, headers). A payload that is a str is sent as it is (a body that is not
JSON); a float status means "sleep that long, then answer 200 with the payload" (a slow or
hanging server). The server counts its requests and its calls in flight over time
(`Traffic`), and may have a fixed number of slots (a call past them waits for one).

It serves in this process, in a thread (`fake_openai_server`, `serve`: the tests, which
script the answers and read the bodies received), or as its own process, where a bench times
a whole process and the server's CPU must stay out of it (`FakeModelProcess`, which runs

    python -m evals.bench.fake_model (--port N | --fd FD) [--latency-ms 200] [--slots K]
        [--faults P429,P500,PHANG,HANG_S] [--answer TEXT]

and reads its traffic at /stats, zeroed at /reset).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.serving import bound_socket, serve_in_thread
from app.settings import PROJECT_ROOT

Handler = Callable[[dict[str, Any]], tuple[Any, ...]]

# What the benches' model answers: it names two of the demo lab's machines, so a bench case's
# checks have something to read.
BENCH_ANSWER = "The lab's Form 4 and Trotec Speedy 400 can help."
START_TIMEOUT_S = 10.0


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None
               ) -> dict[str, Any]:
    """A chat completion with one choice: `content`, and `tool_calls` if any."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }


def answer_after(latency_s: float, content: str = BENCH_ANSWER) -> Handler:
    """A handler that answers every request with `content`, `latency_s` after it came."""
    answer = (float(latency_s), completion(content))
    return lambda body: answer


@dataclass(frozen=True)
class Faults:
    """The share of requests answered 429 (with Retry-After: 0), answered 500, or answered
    only after `hang_s` (past a client's timeout); the rest go to the handler."""

    rate_limited: float = 0.0
    server_error: float = 0.0
    hang: float = 0.0
    hang_s: float = 0.0

    def __post_init__(self) -> None:
        shares = (self.rate_limited, self.server_error, self.hang)
        if any(not 0 <= s <= 1 for s in shares) or sum(shares) > 1:
            raise ValueError(f"the shares of faulty requests must each be between 0 and 1 and"
                             f" add up to at most 1, not {shares}")
        if self.hang_s < 0:
            raise ValueError(f"a hang lasts 0 seconds or more, not {self.hang_s}")

    @classmethod
    def parse(cls, text: str) -> Faults:
        """P429,P500,PHANG,HANG_S, e.g. `0.3,0.1,0.05,3`."""
        parts = text.split(",")
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            numbers = []
        if len(numbers) != 4:
            raise ValueError(f"faults are four numbers, P429,P500,PHANG,HANG_S, not {text!r}")
        return cls(*numbers)


def with_faults(handler: Handler, faults: Faults, *, seed: int = 11) -> Handler:
    """`handler`, but for the share of requests `faults` makes fail (seeded: one storm is the
    same storm every time)."""
    rng = random.Random(seed)
    hang_from = faults.rate_limited + faults.server_error

    def answer(body: dict[str, Any]) -> tuple[Any, ...]:
        roll = rng.random()
        if roll < faults.rate_limited:
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if roll < hang_from:
            return 500, {"error": {"message": "server error"}}
        if roll < hang_from + faults.hang:
            return float(faults.hang_s), handler(body)[1]
        return handler(body)

    return answer


class Traffic:
    """The requests a server took and its calls in flight over time (a call holding a slot,
    from taking it to its answer)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.area = 0.0  # calls in flight × seconds
        self.first: float | None = None  # perf_counter at the first call
        self.first_wall: float | None = None  # time.time() at the first call
        self.last: float | None = None  # perf_counter at the last answer
        self._since: float | None = None

    def _account(self, now: float) -> None:
        if self._since is not None:
            self.area += self.in_flight * (now - self._since)
        self._since = now

    def started(self) -> None:
        now = time.perf_counter()
        self._account(now)
        self.in_flight += 1
        self.requests += 1
        if self.first is None:
            self.first, self.first_wall = now, time.time()

    def finished(self) -> None:
        now = time.perf_counter()
        self._account(now)
        self.in_flight -= 1
        self.last = now

    def stats(self) -> dict[str, Any]:
        """requests, span_s (first call to last answer), first_wall, mean_in_flight."""
        span = (self.last or 0) - (self.first or 0)
        return {"requests": self.requests, "span_s": span, "first_wall": self.first_wall,
                "mean_in_flight": self.area / span if span else 0.0}


def fake_model_app(handler: Handler, *, traffic: Traffic | None = None,
                   received: list[dict[str, Any]] | None = None,
                   slots: int | None = None) -> Starlette:
    """The server: POST /v1/chat/completions answered by `handler` (each body appended to
    `received` if given), GET /v1/models, GET /health, and the traffic at GET /stats, zeroed
    by POST /reset."""
    traffic = traffic or Traffic()
    # A semaphore binds to the event loop that first waits on it: the server's, in its thread.
    slot = asyncio.Semaphore(slots) if slots else None

    async def chat(request: Request) -> Response:
        body = await request.json()
        if received is not None:
            received.append(body)
        async with slot or nullcontext():
            traffic.started()
            try:
                answer = handler(body)
                status, payload = answer[0], answer[1]
                headers = answer[2] if len(answer) > 2 else None
                if isinstance(status, float):
                    await asyncio.sleep(status)
                    status = 200
            finally:
                traffic.finished()
        if isinstance(payload, str):
            return Response(payload, status_code=status, headers=headers,
                            media_type="application/json")
        return JSONResponse(payload, status_code=status, headers=headers)

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(traffic.stats())

    async def reset(request: Request) -> JSONResponse:
        traffic.reset()
        return JSONResponse({"ok": True})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/models", models), Route("/stats", stats),
                             Route("/reset", reset, methods=["POST"]),
                             Route("/health", health)])


@dataclass
class FakeModel:
    """A fake model server in this process: its OpenAI base URL (ending in /v1), the bodies
    it received, its traffic."""

    base: str
    received: list[dict[str, Any]]
    traffic: Traffic


@contextmanager
def serve(handler: Handler, *, slots: int | None = None) -> Iterator[FakeModel]:
    """The fake model server in a thread of this process while the block runs."""
    received: list[dict[str, Any]] = []
    traffic = Traffic()
    app = fake_model_app(handler, traffic=traffic, received=received, slots=slots)
    with serve_in_thread(app) as root:
        yield FakeModel(f"{root}/v1", received, traffic)


@contextmanager
def fake_openai_server(handler: Handler) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yields (base_url, received request bodies)."""
    with serve(handler) as server:
        yield server.base, server.received


class FakeModelProcess:
    """The fake model server in its own process, answering `answer` after `latency_s`, with
    `faults` and `slots` if given; its traffic read by `stats()`, zeroed by `reset()`."""

    def __init__(self, latency_s: float, *, slots: int | None = None,
                 faults: Faults | None = None, answer: str = BENCH_ANSWER) -> None:
        # The port is chosen when the process starts (a socket bound here and handed to it,
        # so no other process is given the port meanwhile); its addresses are known then.
        self.port = 0
        self.root = self.base = ""
        faults = faults or Faults()
        self.argv = [sys.executable, "-m", "evals.bench.fake_model",
                     "--latency-ms", repr(latency_s * 1000), "--answer", answer,
                     "--faults", f"{faults.rate_limited},{faults.server_error},{faults.hang},"
                                 f"{faults.hang_s}"]
        if slots:
            self.argv += ["--slots", str(slots)]
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> FakeModelProcess:
        # The socket is bound here and served on by the child (--fd): a port chosen here and
        # bound by the child later may be given to another process meanwhile.
        with bound_socket() as sock:
            self.port = int(sock.getsockname()[1])
            self.root = f"http://127.0.0.1:{self.port}"
            self.base = f"{self.root}/v1"
            # From the project's root, so the child imports this checkout's evals, not an
            # installed one.
            self.proc = subprocess.Popen([*self.argv, "--fd", str(sock.fileno())],
                                         cwd=PROJECT_ROOT, pass_fds=(sock.fileno(),))
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                httpx.get(f"{self.root}/health", timeout=1)
                return self
            except httpx.HTTPError:
                pass
            code = self.proc.poll()
            if code is not None or time.monotonic() > deadline:
                self.__exit__()
                why = (f"exited with {code}" if code is not None
                       else f"did not answer in {START_TIMEOUT_S:.0f} s")
                raise RuntimeError(f"the fake model server on port {self.port} {why}")
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()

    def stats(self) -> dict[str, Any]:
        """What `Traffic.stats` says in the server's process."""
        return dict(httpx.get(f"{self.root}/stats", timeout=5).json())

    def reset(self) -> None:
        httpx.post(f"{self.root}/reset", timeout=5).raise_for_status()


def _faults(text: str) -> Faults:
    try:
        return Faults.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.bench.fake_model",
                                     description="A fake OpenAI-compatible model server on"
                                                 " 127.0.0.1, until it is stopped.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int, help="the port to listen on, on 127.0.0.1")
    where.add_argument("--fd", type=int,
                       help="a bound socket inherited from the process that started this one")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="the time each answer takes")
    parser.add_argument("--slots", type=int, default=None,
                        help="calls answered at once (a call past them waits); unbounded if unset")
    parser.add_argument("--faults", type=_faults, default=Faults(),
                        metavar="P429,P500,PHANG,HANG_S",
                        help="shares of requests answered 429, answered 500, or hanging HANG_S")
    parser.add_argument("--answer", default=BENCH_ANSWER, help="what the model answers")
    args = parser.parse_args(argv)
    if args.slots is not None and args.slots < 1:
        parser.error(f"--slots must be 1 or more, not {args.slots}")
    handler = with_faults(answer_after(args.latency_ms / 1000, args.answer), args.faults)
    # Bodies are not kept: a bench may send 10,000 of them. The backlog and the limit are set
    # past what a bench sends at once, so the server never refuses a call.
    config = uvicorn.Config(fake_model_app(handler, slots=args.slots), host="127.0.0.1",
                            port=args.port or 0, log_level="error", backlog=4096,
                            limit_concurrency=10000)
    sockets = None if args.fd is None else [socket.socket(fileno=args.fd)]
    uvicorn.Server(config).run(sockets=sockets)


if __name__ == "__main__":
    main()
