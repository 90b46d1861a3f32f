"""Two versions of the agent paired on one plan: a point's frozen agent against today's
(`compare`), or two stored runs (`compare_runs`). A changed plan is refused, never reported
as an improvement."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass

from app.chat.models import ChatModel, ModelCallError, model_for_job
from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import RunOptions
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
from evals.api.setup import asked_model, in_store, open_store, start_models, with_models
from evals.execute.agent import FrozenAgentError, PlanMismatch, as_recorded, named
from evals.execute.guard import Spend
from evals.execute.session import Version, prepared, run_versions, validate_versions
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.selection import UnknownNames, select_items
from evals.record.comparison import Comparison
from evals.record.fingerprint import Point, Selection
from evals.record.run import RunRecord
from evals.report.compare import compare_runs as pair_runs


@dataclass(frozen=True)
class Compared:
    """Two runs paired: the comparison, both records, and where it is kept."""

    result: Comparison
    baseline: RunRecord
    current: RunRecord
    point: Point | None = None  # the point compared against (a new one when a plan was adopted)
    comparison_id: str | None = None  # None: the store failed, and `store_failed` says why
    store_failed: str | None = None

    @property
    def capped(self) -> bool:
        """The cost cap kept items from running on either side."""
        return any(r.capped for r in (self.baseline, self.current))

    @property
    def exit_code(self) -> int:
        return 1 if self.comparison_id is None or self.capped else 0


def compare(point: str, options: RunOptions | None = None, *, adopt_plan: bool = False,
            progress: bool = True) -> Compared:
    """A point's frozen agent against today's (or today's on `options.model`, a model
    switch), each item run by both, paired, and the comparison stored. `options.selection`
    is the point's own. When the plan changed since the point, it is refused, unless
    `adopt_plan`: then a new point keeps the old agent and adopts today's plan."""
    options = options or RunOptions()
    loaded = load_point(point)
    planned, items = point_items(loaded, adopt_plan)
    options = dataclasses.replace(options, selection=point_selection(loaded))
    return with_models(options, items, [options.model, loaded.agent.ref],
                       lambda s, opts, spend: _compare_point(s, loaded, items, opts, adopt_plan,
                                                             planned, progress, spend))


def compare_runs(baseline: str, current: str) -> Compared:
    """Two stored runs of one plan, paired, and the comparison stored."""
    return in_store(lambda settings: _compare_stored(settings, baseline, current))


def plan_refused(what: str, changes: list[str], hint: str | None = None) -> ApiError:
    return ApiError("\n".join([what, *(f"  {line}" for line in changes or
                                       ["(a run has no plan)"]),
                               *([hint] if hint else [])]))


def point_items(p: Point, adopt_plan: bool) -> tuple[Selection | None, list[EvalItem]]:
    """The selection a point's plan records and today's items for it. A name the selection
    holds that is no case or scenario any more (deleted or renamed) is refused, saying what to
    do; with `adopt_plan` it is left out (if anything is left), and the plan changes say so."""
    try:
        items = select_items(point_selection(p))
    except UnknownNames as exc:
        saved = p.plan.selection or Selection()
        gone = ", ".join(repr(n) for n in exc.names)
        left = tuple(n for n in saved.names if n not in exc.names)
        what = (f"point {p.name} selects {gone}, no longer a case or scenario file or id"
                " (deleted or renamed since the point was saved)")
        if not left:
            raise ApiError(f"{what}, and nothing else: it cannot run again. Save a point to"
                           " compare against from now on: python -m evals point save NAME"
                           " --cases …") from exc
        if not adopt_plan:
            raise ApiError(f"{what}. Rerun with --adopt-plan to leave {gone} out: a new point"
                           f" keeps the old agent and adopts the plan of the rest"
                           f" ({','.join(left)}); or save a point of today's agent for those:"
                           f" python -m evals point save NAME --cases {','.join(left)}"
                           ) from exc
        print(f"leaving out {gone}: no longer a case or scenario")
        return (saved.model_copy(update={"names": left}),
                select(point_selection(p).model_copy(update={"names": left})))
    except CaseFileError as exc:
        raise ApiError("\n".join([f"point {p.name}'s selection no longer loads:", *exc.errors])
                       ) from exc
    if not items:
        raise ApiError(f"point {p.name}'s selection selects nothing today")
    return p.plan.selection, items


def point_selection(p: Point) -> Selection:
    """What a point runs: its own selection; a point saved before scenarios were compared
    ran cases only, and still does."""
    if p.plan.selection is None:
        return Selection(only="cases")
    if p.plan.visitor is None and p.plan.selection.only is None and not any(
            "@" in item for item in p.plan.cases):
        return p.plan.selection.model_copy(update={"only": "cases"})
    return p.plan.selection


def unfrozen_error(p: Point, exc: PlanMismatch, planned: Selection | None) -> ApiError:
    """A point whose agent was never told anything in a context items use today: which items,
    why, and what to do (adopting the plan cannot help: the agent is the point's)."""
    where = "; ".join(f"{key} ({named(ids)})" for key, ids in exc.missing.items())
    flags = _selection_flags(planned)
    return ApiError(f"point {p.name} cannot run these items: its frozen agent was never told"
                    f" anything in their context: {where}. Each is new, or its page, audience"
                    " or catalogue changed since the point was saved, so nothing says what that"
                    " agent would be told there (--adopt-plan keeps that agent, so it cannot"
                    " help). Save a point of today's agent to compare against from now on:"
                    f" python -m evals point save NAME{flags}; or put the items back in a"
                    f" context the point froze ({', '.join(sorted(p.agent.contexts))})")


def frozen_model(settings: Settings, p: Point) -> ChatModel:
    """The model a point's frozen agent runs on, asked for as the point asked, at the
    temperature it recorded (unset: the provider's default), not today's."""
    try:
        return model_for_job(as_recorded(settings, p.agent.settings), "chat", p.agent.ref)
    except ModelCallError as exc:
        raise ApiError(f"cannot start: {exc}") from exc


def tool_steps(versions: list[Version], settings: Settings) -> list[int]:
    """Each version's tool rounds per turn: a frozen agent's recorded limit, else today's."""
    return [v.max_steps or settings.max_tool_steps for v in versions]


def _selection_flags(selection: Selection | None) -> str:
    """The `point save` flags that select what a selection did."""
    if selection is None:
        return ""
    return "".join([f" --cases {','.join(selection.names)}" if selection.names else "",
                    f" --group {','.join(selection.groups)}" if selection.groups else "",
                    f" --{selection.only}-only" if selection.only else "",
                    " --full" if selection.full else ""])


async def _compare_stored(settings: Settings, a: str, b: str) -> Compared:
    async with open_store(settings) as store:
        base, cur = await store.load_run(a), await store.load_run(b)
        if base.plan is None or cur.plan is None or \
                base.plan.fingerprint != cur.plan.fingerprint:
            changes = cur.plan.changes_since(base.plan) if base.plan and cur.plan else []
            raise plan_refused(f"runs {base.run_id} and {cur.run_id} ran different plans; a"
                               " changed plan is never an improvement of the agent:", changes)
        # A run stored before the plan held the visitor: its model is in the run's models.
        if base.models.visitor != cur.models.visitor:
            raise plan_refused(f"runs {base.run_id} and {cur.run_id} ran different plans; a"
                               " changed plan is never an improvement of the agent:",
                               [f"simulated visitor's model changed: {base.models.visitor}"
                                f" -> {cur.models.visitor}"])
        result = pair_runs(base, cur)
        cid = await store.save_comparison(None, base.run_id or "", cur.run_id or "", result)
    return Compared(result, base, cur, comparison_id=cid)


async def _compare_point(settings: Settings, p: Point, items: list[EvalItem],
                         options: RunOptions, adopt_plan: bool,
                         planned: Selection | None, progress: bool, spend: Spend) -> Compared:
    (current_model,), judge = start_models(settings, items, options.judge, options.model)
    baseline_model = frozen_model(settings, p)
    visitor = visitor_for(settings, items)
    controls = run_controls(options, spend, [baseline_model, current_model], judge, visitor)
    plan = plan_for(items, judge, p.plan.repeat, planned, p.plan.repeat_rule, visitor)
    asked = p.name
    versions = [Version("baseline", baseline_model, p.agent),
                Version("current", current_model, ref=asked_model(settings, options.model))]
    try:
        validate_versions(items, versions)  # before anything is written or adopted
    except PlanMismatch as exc:
        raise unfrozen_error(p, exc, planned) from exc
    except FrozenAgentError as exc:
        raise ApiError(f"point {p.name} can no longer run: {exc}") from exc
    if plan.fingerprint != p.plan.fingerprint:
        changes = plan.changes_since(p.plan)
        if not adopt_plan:
            raise plan_refused(f"the plan changed since point {p.name}; a changed plan is never"
                               " reported as an improvement. Changes:", changes,
                               "rerun with --adopt-plan to save a new point that keeps the old"
                               " agent and adopts this plan")
        p = Point(name=f"{p.name}+{plan.fingerprint[:8]}",
                  created=dt.datetime.now(dt.UTC).isoformat(), plan=plan, agent=p.agent)
        print(f"adopting the new plan ({len(changes)} change(s)) as point {p.name}")
    print_start(f"{p.agent.model} (point {p.name}) vs {current_model.model_id}", items,
                plan.repeat, settings, rule=plan.repeat_rule,
                steps=tool_steps(versions, settings))
    tick = progress_bar(len(items) * plan.repeat * 2) if progress else None
    run, models = run_settings(options, judge, visitor)
    try:
        async with prepared(settings) as prep:
            if p.name != asked:
                await prep.store.save_point(p)
            records = await run_versions(
                prep, items, versions, plan, settings=run, models=models,
                vision=options.vision, judge=judge, visitor=visitor, progress=tick,
                point=p.name, cache=options.cache, controls=controls)
            result = pair_runs(records["baseline"], records["current"])
            failed = prep.store_failed
            cid = None if failed else await prep.store.save_comparison(
                p.name, records["baseline"].run_id or "", records["current"].run_id or "",
                result)
    except (PlanMismatch, FrozenAgentError) as exc:
        raise ApiError(f"point {p.name} can no longer run: {exc}") from exc
    finally:
        if tick is not None:
            tick(None)
    return Compared(result, records["baseline"], records["current"], point=p,
                    comparison_id=cid, store_failed=failed)
