"""Start and stop the local model server (a child process), with clear one-line failures."""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil

from app.localmodel.assemble import MODELS, ModelAssemblyError, ModelSpec, assemble
from app.serving import free_port

READY_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 10.0
# The model file plus its KV cache and compute buffers, measured at about 2 GB for the 1.5B.
MEMORY_HEADROOM_BYTES = 1 << 30

Say = Callable[[str], None]


class LocalModelError(RuntimeError):
    """A step of starting the local model failed; the message names it and what to do."""


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class LocalModelServer:
    """A server process answering OpenAI chat requests on 127.0.0.1:port."""

    def __init__(self, command: list[str], port: int, log_path: Path, *,
                 ready_timeout_s: float = READY_TIMEOUT_S) -> None:
        self.command = command
        self.port = port
        self.log_path = log_path
        self.ready_timeout_s = ready_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self.prefix_cache: Path | None = None  # where its slots are saved, if anywhere
        self.model_sha = ""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        if port_in_use(self.port):
            raise LocalModelError(f"starting: port {self.port} on 127.0.0.1 is in use;"
                                  " stop what holds it or pick another port")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        atexit.register(self.stop)
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(f"starting: the model server exited with code"
                                      f" {self.process.returncode}: {self._log_tail()}"
                                      f" (full log: {self.log_path})")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise LocalModelError(f"starting: not ready after {self.ready_timeout_s:.0f} s"
                              f" (log: {self.log_path})")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return lines[-1] if lines else "(empty log)"


def prefix_cache_folder(data_dir: Path, spec: ModelSpec) -> Path:
    return data_dir / "prefix-cache" / spec.identity[:16]


def _spec(name: str, setting: str) -> ModelSpec:
    spec = MODELS.get(name)
    if spec is None:
        raise LocalModelError(f"unknown {setting} {name!r}; known: {', '.join(MODELS)}")
    return spec


@contextmanager
def local_model(data_dir: Path, name: str, *, parallel: int, ctx: int,
                say: Say = print, kv_unified: bool = False, speculative: str = "off",
                draft: str = "") -> Iterator[LocalModelServer]:
    """Assemble and verify the model (and, for speculative="draft", the draft model), serve
    it on a free loopback port, stop it on exit (normal end, error or Ctrl-C)."""
    spec = _spec(name, "LOCAL_MODEL")
    draft_spec = _spec(draft, "LOCAL_MODEL_DRAFT") if speculative == "draft" else None
    started = time.monotonic()
    try:
        path = assemble(spec, data_dir / "models", say)
        draft_path = assemble(draft_spec, data_dir / "models", say) if draft_spec else None
    except ModelAssemblyError as exc:
        raise LocalModelError(f"assembling: {exc}") from exc
    need = spec.size + (draft_spec.size if draft_spec else 0) + MEMORY_HEADROOM_BYTES
    available = psutil.virtual_memory().available
    if available < need:
        raise LocalModelError(f"starting: not enough memory: {available >> 20} MiB available,"
                              f" about {need >> 20} MiB needed; close something or set"
                              " MODEL_CHAT to a hosted model")
    port = free_port()
    say(f"local model: starting {spec.name} on 127.0.0.1:{port}"
        f" ({parallel} slots × {ctx} tokens"
        + (f", speculative decoding: {speculative}" if speculative != "off" else "") + ")")
    # Saved prompt prefixes, per model file (see prefix_cache.py).
    slots = prefix_cache_folder(data_dir, spec)
    slots.mkdir(parents=True, exist_ok=True)
    server = LocalModelServer(
        [sys.executable, "-m", "app.localmodel.serve", "--model", str(path), "--port",
         str(port), "--ctx", str(ctx), "--parallel", str(parallel),
         "--threads", str(os.cpu_count() or 2), "--slot-save-path", str(slots),
         *(["--kv-unified"] if kv_unified else []),
         *(["--draft-model", str(draft_path)] if draft_path else []),
         *(["--ngram"] if speculative == "ngram" else [])],
        port, data_dir / "logs" / "local-model.log")
    server.prefix_cache = slots
    server.model_sha = spec.identity
    server.start()
    say(f"local model: ready in {time.monotonic() - started:.1f} s")
    try:
        yield server
    finally:
        served = served_line(f"http://127.0.0.1:{server.port}")
        server.stop()
        if served:
            say(served)


# llama.cpp's own counters (its /metrics endpoint), over every request the server answered.
METRICS = ("prompt_tokens_total", "prompt_seconds_total", "tokens_predicted_total",
           "tokens_predicted_seconds_total")


def served_line(base_url: str) -> str | None:
    """What the server spent its time on, every job included (chat, judge, visitor):
    prefill and generation, from its counters; None if it cannot say."""
    try:
        text = httpx.get(f"{base_url}/metrics", timeout=2).raise_for_status().text
    except httpx.HTTPError:
        return None
    found: dict[str, float] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        metric = name.removeprefix("llamacpp:")
        if metric != name and metric in METRICS:
            try:
                found[metric] = float(value)
            except ValueError:
                return None
    if len(found) < len(METRICS):
        return None
    return (f"local model: served {found['prompt_tokens_total']:,.0f} prompt tokens in"
            f" {found['prompt_seconds_total'] / 60:.1f} min of prefill and generated"
            f" {found['tokens_predicted_total']:,.0f} tokens in"
            f" {found['tokens_predicted_seconds_total'] / 60:.1f} min (every job)")
