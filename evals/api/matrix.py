"""Many versions of the agent on one plan, in one table (`python -m evals matrix`): today's
agent on each model asked for, and each point's frozen agent, every item run by every
version, interleaved, each version stored as its own run; then the table, each column paired
with a baseline column (evals/report/matrix.py). A stored matrix is its runs: `matrix_runs`
makes the table again from their ids, calling no model.

With the call cache on (`options.cache`), a column already run under this plan in an earlier
command replays its calls, so adding a column costs that column alone (within one command,
identical calls of two columns in flight at once are both made). Every call of every column
draws on the command's one budget (`options.max_cost`), as any command's does. A point whose
plan differs from today's is refused, as `compare` refuses it: a changed plan is never a
difference between versions."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import RunOptions
from evals.api.pairing import (
    frozen_model,
    plan_refused,
    point_items,
    point_selection,
    tool_steps,
    unfrozen_error,
)
from evals.api.points import load_point
from evals.api.progress import progress_bar
from evals.api.runs import (
    plan_for,
    print_start,
    run_controls,
    run_settings,
    select,
    visitor_for,
)
from evals.api.setup import in_store, open_store, start_models, with_models
from evals.execute.agent import FrozenAgentError, PlanMismatch
from evals.execute.guard import Spend
from evals.execute.session import Version, prepared, run_versions, validate_versions
from evals.load.items import EvalItem
from evals.record.fingerprint import Point, Selection
from evals.record.matrix import Matrix
from evals.record.run import RunRecord
from evals.record.store import RunStore
from evals.report.matrix import build, plan_differs


@dataclass(frozen=True)
class Matrixed:
    """The table, the runs it was made of, and whether the store kept them."""

    result: Matrix
    records: dict[str, RunRecord]
    store_failed: str | None = None

    @property
    def capped(self) -> bool:
        """The cost cap left items unrun in some column."""
        return any(r.capped for r in self.records.values())

    @property
    def exit_code(self) -> int:
        return 1 if self.store_failed or self.capped else 0


def labels_of(models: Sequence[str], points: Sequence[str]) -> list[str]:
    """The columns' labels, in order: each model id, then each point's name; a repeated one is
    refused (two columns of one version pair nothing)."""
    labels = [*models, *points]
    if len(labels) < 2:
        raise ApiError("a matrix needs at least two versions (models, points, or stored runs"
                       " of one plan)")
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:
        raise ApiError(f"a version is asked for twice: {', '.join(repeated)}")
    return labels


def baseline_of(labels: list[str], baseline: str | None) -> str:
    if baseline is None:
        return labels[0]
    if baseline not in labels:
        raise ApiError(f"the baseline {baseline} is not one of the columns"
                       f" ({', '.join(labels)})")
    return baseline


def points_selection(points: list[Point], asked: Selection) -> Selection:
    """What the points run: their own selection (as `compare` reads a point's), which must
    be one; with none, the options'."""
    if not points:
        return asked
    for p in points[1:]:
        if p.plan.fingerprint != points[0].plan.fingerprint:
            raise plan_refused(f"points {points[0].name} and {p.name} froze different plans;"
                               " one matrix runs one plan:",
                               p.plan.changes_since(points[0].plan))
    return point_selection(points[0])


def matrix(models: Sequence[str] = (), points: Sequence[str] = (),
           options: RunOptions | None = None, *, baseline: str | None = None,
           progress: bool = True) -> Matrixed:
    """Today's agent on each of `models` and each point's frozen agent, run on one plan (the
    points', else `options.selection`), stored, and tabled against `baseline` (a column's
    label; default: the first)."""
    options = options or RunOptions()
    labels = labels_of(models, points)
    base = baseline_of(labels, baseline)
    loaded = [load_point(name) for name in points]
    selection = points_selection(loaded, options.selection)
    items = point_items(loaded[0], False)[1] if loaded else select(selection)
    options = dataclasses.replace(options, selection=selection)
    refs: list[str | None] = [*models, *(p.agent.ref for p in loaded)]
    return with_models(options, items, refs, lambda s, opts, spend: _run(
        s, list(models), loaded, items, opts, base, progress, spend))


def matrix_runs(run_ids: Sequence[str], *, baseline: str | None = None) -> Matrixed:
    """The table of stored runs of one plan (columns labelled by run id), calling no model."""
    return in_store(lambda settings: _stored(settings, list(run_ids), baseline))


async def stored_matrix(store: RunStore, ids: Sequence[str],
                        baseline: str | None = None) -> Matrixed:
    """The table of stored runs of one plan, from an open store (the command, the workspace
    and the MCP tool all make it here): two runs or more, none twice, one plan; an unknown
    run is the store's StoreError."""
    labels_of(ids, ())  # two or more, none typed twice
    records: dict[str, RunRecord] = {}
    for rid in ids:  # an id may be a prefix: columns are the runs it names, each once
        record = await store.load_run(rid)
        full = record.run_id or rid
        if full in records:
            raise ApiError(f"run {full} is asked for twice ({rid}): a run paired with itself"
                           " says nothing")
        records[full] = record
    base = baseline_of(list(records), _resolved(baseline, list(records)))
    refused = plan_differs(records)
    if refused:
        raise ApiError("\n".join(refused))
    refs = {rid: r.models.chat or "?" for rid, r in records.items()}
    return Matrixed(build(records, refs, base), records)


def _resolved(baseline: str | None, ids: list[str]) -> str | None:
    """A baseline given as a prefix of one of the runs: that run's id."""
    if baseline is None or baseline in ids:
        return baseline
    named = [i for i in ids if i.startswith(baseline)]
    return named[0] if len(named) == 1 else baseline


async def _stored(settings: Settings, ids: list[str], base: str | None) -> Matrixed:
    async with open_store(settings) as store:
        return await stored_matrix(store, ids, base)


async def _run(settings: Settings, models: list[str], points: list[Point],
               items: list[EvalItem], options: RunOptions, base: str,
               progress: bool, spend: Spend) -> Matrixed:
    chat, judge = start_models(settings, items, options.judge, *models)
    visitor = visitor_for(settings, items)
    frozen = [frozen_model(settings, p) for p in points]
    controls = run_controls(options, spend, [*chat, *frozen], judge, visitor)
    # The points' plan as they saved it (what runs is read from it as `compare` reads it).
    plan = plan_for(items, judge, points[0].plan.repeat if points else options.repeat,
                    points[0].plan.selection if points else options.selection,
                    points[0].plan.repeat_rule if points else options.rule, visitor)
    versions = [Version(ref, model, ref=ref) for ref, model in zip(models, chat, strict=True)]
    for p in points:
        if plan.fingerprint != p.plan.fingerprint:
            raise plan_refused(f"the plan changed since point {p.name}; a changed plan is"
                               " never a difference between versions. Changes:",
                               plan.changes_since(p.plan),
                               f"compare --adopt-plan {p.name} saves a point of that agent"
                               " under today's plan")
    versions += [Version(p.name, model, p.agent) for p, model in zip(points, frozen, strict=True)]
    try:
        validate_versions(items, versions)
    except PlanMismatch as exc:
        point = next(p for p in points if p.name == exc.label)
        raise unfrozen_error(point, exc, point.plan.selection) from exc
    except FrozenAgentError as exc:
        raise ApiError(f"a point can no longer run: {exc}") from exc
    print_start(" · ".join(v.label for v in versions), items, plan.repeat, settings,
                rule=plan.repeat_rule, steps=tool_steps(versions, settings))
    tick = progress_bar(len(items) * plan.repeat * len(versions)) if progress else None
    run, kept_models = run_settings(options, judge, visitor)
    try:
        async with prepared(settings) as prep:
            records = await run_versions(
                prep, items, versions, plan, settings=run, models=kept_models,
                vision=options.vision, judge=judge, visitor=visitor, progress=tick,
                cache=options.cache, controls=controls)
            failed = prep.store_failed
    except (PlanMismatch, FrozenAgentError) as exc:
        raise ApiError(f"a point can no longer run: {exc}") from exc
    finally:
        if tick is not None:
            tick(None)
    refs = {v.label: (f"point {v.label} ({v.frozen.model})" if v.frozen is not None
                      else v.model.model_id) for v in versions}
    return Matrixed(build(records, refs, base), records, store_failed=failed)
