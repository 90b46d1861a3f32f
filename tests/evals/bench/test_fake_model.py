"""The fake OpenAI-compatible model server: its handler contract in a thread, its traffic and
slots, its canned behaviours (a fixed latency, faults), and the server as its own process."""

import asyncio
import sys
import time

import httpx
import pytest

import evals.bench.fake_model as fake_model
from app.serving import listens
from evals.bench.fake_model import (
    BENCH_ANSWER,
    FakeModelProcess,
    Faults,
    answer_after,
    completion,
    serve,
    with_faults,
)


def post(base, body=None, timeout=5.0):
    return httpx.post(f"{base}/chat/completions", json=body or {"messages": []},
                      timeout=timeout)


def test_a_handler_answers_json_text_headers_and_late():
    answers = iter([(200, completion("hi")), (503, "not json", {"Retry-After": "2"}),
                    (0.2, completion("late"))])
    with serve(lambda body: next(answers)) as server:
        first = post(server.base, {"model": "fake", "messages": [{"role": "user"}]})
        second = post(server.base)
        started = time.perf_counter()
        third = post(server.base)
        took = time.perf_counter() - started
    assert first.status_code == 200
    assert first.json()["choices"][0]["message"]["content"] == "hi"
    assert second.status_code == 503 and second.text == "not json"
    assert second.headers["retry-after"] == "2"
    assert third.status_code == 200 and took >= 0.19
    assert third.json()["choices"][0]["message"]["content"] == "late"
    assert server.received[0] == {"model": "fake", "messages": [{"role": "user"}]}
    assert len(server.received) == 3


def test_a_completion_with_tool_calls_says_so():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    choice = completion(tool_calls=[call])["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["tool_calls"] == [call]
    assert completion("x")["choices"][0]["finish_reason"] == "stop"


def test_the_server_lists_a_model_and_answers_health():
    with serve(answer_after(0)) as server:
        models = httpx.get(f"{server.base}/models", timeout=5).json()
        root = server.base.removesuffix("/v1")
        health = httpx.get(f"{root}/health", timeout=5)
    assert [m["id"] for m in models["data"]] == ["fake"]
    assert health.status_code == 200


async def _at_once(base, n):
    async with httpx.AsyncClient(timeout=10) as client:
        replies = await asyncio.gather(*(client.post(f"{base}/chat/completions",
                                                     json={"messages": []})
                                         for _ in range(n)))
    assert all(r.status_code == 200 for r in replies)
    return replies


async def test_traffic_counts_requests_and_calls_in_flight_and_resets():
    with serve(answer_after(0.2)) as server:
        replies = await _at_once(server.base, 4)
        stats = server.traffic.stats()
        root = server.base.removesuffix("/v1")
        async with httpx.AsyncClient(timeout=5) as client:
            assert (await client.get(f"{root}/stats")).json() == stats
            assert (await client.post(f"{root}/reset")).json() == {"ok": True}
        after = server.traffic.stats()
    assert replies[0].json()["choices"][0]["message"]["content"] == BENCH_ANSWER
    assert stats["requests"] == 4 and stats["span_s"] >= 0.19
    assert stats["first_wall"] is not None and 2 < stats["mean_in_flight"] <= 4
    assert after == {"requests": 0, "span_s": 0, "first_wall": None, "mean_in_flight": 0.0}


async def test_slots_bound_the_calls_in_flight():
    with serve(answer_after(0.1), slots=1) as server:
        await _at_once(server.base, 3)
        stats = server.traffic.stats()
    assert stats["requests"] == 3 and stats["span_s"] >= 0.29
    assert stats["mean_in_flight"] <= 1.0 + 1e-9


def test_faults_answer_their_shares_the_same_way_every_time():
    storm = Faults(0.30, 0.10, 0.05, 3.0)
    one, two = (with_faults(answer_after(0.2), storm) for _ in range(2))
    answers = [one({}) for _ in range(2000)]
    again = [two({}) for _ in range(2000)]
    assert answers == again
    statuses = [a[0] for a in answers]
    assert 0.25 < statuses.count(429) / 2000 < 0.35
    assert 0.07 < statuses.count(500) / 2000 < 0.13
    assert 0.03 < statuses.count(3.0) / 2000 < 0.07
    assert 0.45 < statuses.count(0.2) / 2000 < 0.55
    limited = next(a for a in answers if a[0] == 429)
    assert limited[2] == {"Retry-After": "0"}
    hung = next(a for a in answers if a[0] == 3.0)
    assert hung[1]["choices"][0]["message"]["content"] == BENCH_ANSWER


def test_no_faults_leave_the_handler_alone():
    handler = with_faults(answer_after(0.1, "ok"), Faults())
    answers = [handler({}) for _ in range(200)]
    assert {a[0] for a in answers} == {0.1}
    assert {a[1]["choices"][0]["message"]["content"] for a in answers} == {"ok"}


@pytest.mark.parametrize("shares", [(0.6, 0.6, 0), (-0.1, 0, 0), (0, 0, 1.5)])
def test_faults_whose_shares_are_not_shares_are_refused(shares):
    with pytest.raises(ValueError, match="between 0 and 1"):
        Faults(*shares)


def test_a_negative_hang_is_refused():
    with pytest.raises(ValueError, match="0 seconds or more"):
        Faults(hang=0.1, hang_s=-1)


def test_faults_are_parsed_from_four_numbers():
    assert Faults.parse("0.3,0.1,0.05,3") == Faults(0.3, 0.1, 0.05, 3.0)
    for text in ("0.3,0.1", "0.3,0.1,0.05,3,4", "a,b,c,d", ""):
        with pytest.raises(ValueError, match="four numbers"):
            Faults.parse(text)


@pytest.mark.parametrize(("argv", "message"), [
    (["--port", "1", "--faults", "0.3,0.1"], "four numbers"),
    (["--port", "1", "--faults", "0.9,0.9,0,0"], "between 0 and 1"),
    (["--port", "1", "--slots", "0"], "--slots must be 1 or more"),
    (["--latency-ms", "200"], "one of the arguments --port --fd is required"),
    (["--port", "1", "--fd", "3"], "not allowed with"),
])
def test_the_command_refuses_bad_flags(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        fake_model.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.slow
def test_the_server_in_its_own_process_answers_counts_and_stops():
    with FakeModelProcess(0.05, slots=2, answer="From the other process.") as server:
        reply = post(server.base)
        stats = server.stats()
        server.reset()
        after = server.stats()
        proc = server.proc
        # It serves on the socket bound for it before it started (--fd), so no other
        # process could be given the port meanwhile.
        assert listens(proc.pid, server.port)
    assert reply.json()["choices"][0]["message"]["content"] == "From the other process."
    assert stats["requests"] == 1 and stats["span_s"] >= 0.04 and stats["first_wall"]
    assert after["requests"] == 0
    assert proc is not None and proc.poll() is not None


@pytest.mark.slow
def test_the_server_in_its_own_process_injects_faults():
    with FakeModelProcess(0, faults=Faults(rate_limited=1.0)) as server:
        reply = post(server.base)
    assert reply.status_code == 429 and reply.headers["retry-after"] == "0"


@pytest.mark.slow
def test_a_server_process_that_ends_at_its_start_is_named():
    server = FakeModelProcess(0)
    server.argv += ["--slots", "0"]  # refused by its command line: it ends with 2
    with pytest.raises(RuntimeError, match=r"on port \d+ exited with 2"):
        server.__enter__()


@pytest.mark.slow
def test_a_server_process_that_never_answers_is_named_and_stopped(monkeypatch):
    monkeypatch.setattr(fake_model, "START_TIMEOUT_S", 0.3)
    server = FakeModelProcess(0)
    server.argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(RuntimeError, match="did not answer in 0 s"):
        server.__enter__()
    assert server.proc is not None and server.proc.poll() is not None
