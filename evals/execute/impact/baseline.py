"""What today is compared with before a run: a stored run (the last complete one under the
plan, or one named) or a comparison point, with its agent and plan."""

from __future__ import annotations

from dataclasses import dataclass

from evals.record.fingerprint import AgentInfo, PlanInfo
from evals.record.store import RunStore, StoreError


@dataclass(frozen=True)
class Baseline:
    """What today is compared with: a label for a person, and its agent and plan."""

    label: str  # "run 3f2a9c1b0d4e (…)", "point before-fix"
    agent: AgentInfo
    plan: PlanInfo
    run_id: str | None = None  # a stored run's id
    # The runs whose calls it made or replayed: where its calls are in the call cache.
    call_runs: tuple[str, ...] = ()


async def last_baseline(store: RunStore, plan: PlanInfo) -> Baseline | None:
    """The newest complete stored run under this plan, as a baseline (None: there is none)."""
    run_id = await store.last_complete_run(plan.fingerprint)
    return await run_baseline(store, run_id) if run_id is not None else None


async def run_baseline(store: RunStore, ref: str) -> Baseline:
    """A stored run (an id or a unique prefix) as a baseline; StoreError when it is unknown,
    ambiguous, or has no plan and agent."""
    run = await store.load_run(ref)
    if run.plan is None or run.agent is None:
        raise StoreError(f"run {run.run_id} records no plan or agent: nothing to compare with")
    status = "" if run.status == "complete" else f", {run.status}"
    runs = {run.run_id or ""} | {r for case in run.cases for a in case.attempts
                                 for r in a.calls.replayed_from}
    return Baseline(f"run {run.run_id} (started {(run.started or '?')[:16]}{status})", run.agent,
                    run.plan, run.run_id, tuple(sorted(runs - {""})))
