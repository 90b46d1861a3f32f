"""The gate for a model switch or a prompt change: the suite run twice, every hard file held to
no miss, and, against a point, no regression, no cost or latency rise past its limit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import RunOptions
from evals.api.pairing import frozen_model, plan_refused, tool_steps
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
from evals.api.setup import asked_model, start_models, with_models
from evals.execute.agent import PlanMismatch
from evals.execute.guard import Spend
from evals.execute.session import Version, prepared, run_versions
from evals.load.cases import CaseFileError
from evals.load.items import EvalItem
from evals.load.selection import item_files
from evals.record.artifact import write_run
from evals.record.comparison import Comparison
from evals.record.fingerprint import Point
from evals.record.run import RunRecord
from evals.report.compare import compare_runs
from evals.report.gate import HARD_FILES, TRUSTED_JUDGE_HINT, GateResult
from evals.report.gate import gate as apply_gate


@dataclass(frozen=True)
class Gated:
    """The gate's verdict, the run it read (two repetitions) and its pairing with a point."""

    result: GateResult
    record: RunRecord
    artifact: Path
    comparison: Comparison | None = None
    point: Point | None = None
    store_failed: str | None = None

    @property
    def capped(self) -> bool:
        """The cost cap kept items from running: the gate did not see them."""
        return bool(self.record.capped)

    @property
    def exit_code(self) -> int:
        return 1 if self.store_failed or self.capped else self.result.exit_code


def gate(options: RunOptions | None = None, *, against: str | None = None,
         hard: tuple[str, ...] | None = None, max_cost_increase: float | None = None,
         max_p95_increase: float | None = None, progress: bool = True) -> Gated:
    """Run the selected items twice on `options.model` and gate: every item of a `hard` file
    (default HARD_FILES) must pass both times; against a point (`against`, else one saved for
    the same model and plan if any), no regression and no cost per item or p95 latency rise
    past its limit (a fraction: 0.1 is 10%)."""
    options = options or RunOptions()
    items = select(options.selection)
    held = hard_files(hard)
    point = load_point(against) if against else None
    models = [options.model] + ([point.agent.ref] if point else [])
    limits = (max_cost_increase, max_p95_increase)
    return with_models(options, items, models,
                       lambda s, opts, spend: _gate(s, items, opts, point, held, limits,
                                                    progress, spend))


def hard_files(hard: tuple[str, ...] | None) -> tuple[str, ...]:
    """The hard files, each a case or scenario file: a misspelt name would hold no file hard,
    and the gate would pass what it was asked to refuse."""
    hard = hard or HARD_FILES
    try:
        known = item_files()
    except CaseFileError as exc:
        raise ApiError("\n".join(exc.errors)) from exc
    unknown = [h for h in hard if h not in known]
    if unknown:
        raise ApiError(f"--hard (EVAL_HARD_FILES): {', '.join(repr(h) for h in unknown)}"
                       f" {'is' if len(unknown) == 1 else 'are'} no case or scenario file."
                       f" Files (without .yaml): {', '.join(known)}")
    return hard


async def _gate(settings: Settings, items: list[EvalItem], options: RunOptions,
                against: Point | None, hard: tuple[str, ...],
                limits: tuple[float | None, float | None], progress: bool,
                spend: Spend) -> Gated:
    # The baseline's model is made once its point is known (named, or found below).
    (model,), judge = start_models(settings, items, options.judge, options.model)
    visitor = visitor_for(settings, items)
    controls = run_controls(options, spend, [model], judge, visitor)
    plan = plan_for(items, judge, 2, options.selection, visitor=visitor)
    tick = progress_bar(len(items) * 2 * (2 if against else 1)) if progress else None
    run, run_models = run_settings(options, judge, visitor, gate=True)
    async with prepared(settings) as prep:
        # The gate always runs twice; a point's plan is compared with its own repetitions.
        if against is None:
            for repeat in (1, 2):
                same = plan_for(items, judge, repeat, options.selection, visitor=visitor)
                against = against or await prep.store.find_point(model.model_id,
                                                                 same.fingerprint)
            if against is not None:
                print(f"comparing against point {against.name} (same model and plan)")
        else:
            same = plan_for(items, judge, against.plan.repeat, options.selection,
                            against.plan.repeat_rule, visitor)
            if against.plan.fingerprint != same.fingerprint:
                raise plan_refused(f"point {against.name} has another plan; regressions"
                                   " cannot be paired:", same.changes_since(against.plan))
        versions = [Version("current", model, ref=asked_model(settings, options.model))]
        if against is not None:  # its frozen agent, at the temperature it recorded
            versions.insert(0, Version("baseline", frozen_model(settings, against),
                                       against.agent))
        print_start(model.model_id, items, 2, settings, steps=tool_steps(versions, settings))
        try:
            records = await run_versions(prep, items, versions, plan, settings=run,
                                         models=run_models, vision=options.vision, judge=judge,
                                         visitor=visitor, progress=tick,
                                         point=against.name if against else None,
                                         cache=options.cache, controls=controls)
        except PlanMismatch as exc:
            raise ApiError(str(exc)) from exc
        finally:
            if tick is not None:
                tick(None)
        comparison = compare_runs(records["baseline"], records["current"]) \
            if against is not None else None
        failed = prep.store_failed
    record = records["current"]
    write_run(record, options.artifact)
    hint = f"{judge.model.model_id}: {judge.trust.reason}. To decide: {TRUSTED_JUDGE_HINT}" \
        if judge is not None and not judge.decides else None
    result = apply_gate(record.cases, hard, comparison, judge_hint=hint,
                        max_cost_increase=limits[0], max_p95_increase=limits[1],
                        cache=record.settings.cache)
    return Gated(result, record, options.artifact, comparison, against, failed)
