"""Comparison points: a frozen agent and the plan it ran, saved to compare against later."""

from __future__ import annotations

import asyncio
import datetime as dt

from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import RunOptions
from evals.api.runs import plan_for, select, visitor_for
from evals.api.setup import asked_model, in_store, open_store, start_models, with_models
from evals.execute.agent import agent_info, agent_settings, all_contexts, git_state
from evals.execute.session import prepared
from evals.load.items import EvalItem
from evals.record.fingerprint import Point
from evals.record.listings import PointSummary


def save_point(name: str, options: RunOptions | None = None) -> Point:
    """Freeze today's agent (its model, settings and what it is told in every context the
    selected items use) and the plan, as point `name`."""
    options = options or RunOptions()
    items = select(options.selection)
    return with_models(options, items, [options.model],
                       lambda s, opts, _: _save_point(s, items, name, opts))


def point_from_run(name: str, run: str) -> Point:
    """Freeze a complete stored run's agent and plan as point `name`."""
    return in_store(lambda settings: _point_from_run(settings, name, run))


def load_point(name: str) -> Point:
    return in_store(lambda settings: _load_point(settings, name))


def list_points() -> list[PointSummary]:
    """The saved points, newest first."""

    async def body(settings: Settings) -> list[PointSummary]:
        async with open_store(settings) as store:
            return await store.list_points()

    return in_store(body)


async def _load_point(settings: Settings, name: str) -> Point:
    async with open_store(settings) as store:
        return await store.load_point(name)


async def _save_point(settings: Settings, items: list[EvalItem], name: str,
                      options: RunOptions) -> Point:
    (model,), judge = start_models(settings, items, options.judge, options.model)
    plan = plan_for(items, judge, options.repeat, options.selection, options.rule,
                    visitor_for(settings, items))
    async with prepared(settings) as prep:
        if prep.env is None:  # prepared with the app: cannot happen
            raise RuntimeError("a point's agent needs the app's environment")
        agent = agent_info(model.model_id, agent_settings(settings),
                           await all_contexts(prep.env, items),
                           await asyncio.to_thread(git_state),
                           model_ref=asked_model(settings, options.model))
        p = Point(name=name, created=dt.datetime.now(dt.UTC).isoformat(), plan=plan,
                  agent=agent)
        await prep.store.save_point(p)
    print(f"saved point {p.name}: agent {agent.fingerprint} ({agent.model},"
          f" {len(agent.contexts)} contexts), plan {plan.fingerprint} ({counted(items)})")
    return p


async def _point_from_run(settings: Settings, name: str, run_ref: str) -> Point:
    async with open_store(settings) as store:
        run = await store.load_run(run_ref)
        if run.plan is None or run.agent is None or run.status != "complete":
            raise ApiError(f"run {run.run_id} is {run.status} or has no plan and agent: it"
                           " cannot become a point")
        if run.models.endpoint:
            raise ApiError(f"run {run.run_id} sent its cases to an endpoint"
                           f" ({run.models.endpoint}): it froze no agent of the app, so it"
                           " cannot become a point")
        p = Point(name=name, created=dt.datetime.now(dt.UTC).isoformat(), plan=run.plan,
                  agent=run.agent, from_run=run.run_id)
        await store.save_point(p)
    print(f"saved point {p.name} from run {run.run_id}: agent {p.agent.fingerprint},"
          f" plan {p.plan.fingerprint}")
    return p


def counted(items: list[EvalItem]) -> str:
    talks = sum(1 for i in items if not i.single_turn)
    return f"{len(items) - talks} cases" + (f", {talks} conversations" if talks else "")
