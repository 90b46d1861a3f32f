"""Where a distributed run goes: the address `--ray` takes, and the plan the driver is given."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.embed import Embedder
from app.settings import Settings


class ClusterError(RuntimeError):
    """The cluster cannot run the plan: no address, no Ray, or no worker that started."""


_LOCAL = re.compile(r"^local:(\d+)$")


@dataclass(frozen=True)
class ClusterPlan:
    """Where a run goes and how its workers ask for their models."""

    address: str  # "auto", an address ("host:port", "ray://host:port"), or "local:N"
    settings: Settings  # the app's settings before any model server was started
    local_model: bool  # the run uses the embedded model: each worker starts its own
    server: str  # the run's PostgreSQL server
    refs: Mapping[str, str | None]  # each variant's chat model, as the run asked for it
    judge_ref: str | None = None
    # One OpenAI-compatible server per worker (MODEL_API_BASE): a local cluster standing in
    # for nodes that each serve their own model (the benchmark, the tests).
    model_bases: tuple[str, ...] = ()
    # The workers' embedder (the tests' stand-in); None: the real one, loaded on each node.
    embedder: Embedder | None = None

    @property
    def local_workers(self) -> int | None:
        match = _LOCAL.match(self.address)
        return int(match.group(1)) if match else None


def check_address(address: str) -> str:
    """An address `--ray` accepts, or ClusterError saying what is."""
    match = _LOCAL.match(address)
    if match and int(match.group(1)) < 1:
        raise ClusterError(f"--ray {address}: a local instance needs at least one worker")
    if not (address == "auto" or match or re.match(r"^(ray://)?[\w.\-]+:\d+$", address)):
        raise ClusterError(f"--ray {address!r}: give auto, an address (host:port or"
                           " ray://host:port) or local:N")
    return address
