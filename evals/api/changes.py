"""What a change touches, before it is run (`impact`): today's selection, its plan and agent
against a baseline (a point, a stored run, or the last complete run under today's plan). No
model is started or called."""

from __future__ import annotations

from collections.abc import Sequence

from app.chat.models import ModelCallError, model_for_job
from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import RunOptions
from evals.api.runs import plan_for, select, visitor_for
from evals.api.setup import app_settings, in_store, open_store
from evals.authoring.told import fixture_env
from evals.execute.agent import agent_settings, all_contexts
from evals.execute.impact import Baseline, Impact, impact, last_baseline, run_baseline
from evals.judge import MAKERSPACE
from evals.judge.setup import JudgeSetup
from evals.judge.trust import JudgesFileError, trust
from evals.load.items import EvalItem
from evals.load.packs import PackError, load_pack_prompt
from evals.record.fingerprint import PlanInfo
from evals.record.store import RunStore, StoreError

# A server address the embedded model's ids resolve under: the impact needs a model's id,
# never its server, so none is started and nothing is called.
UNSTARTED_URL = "http://127.0.0.1:9/v1"


def what_changes(options: RunOptions | None = None, *, against: str | None = None
                 ) -> Impact | None:
    """What the run `options` asks for would find changed against `against` (a point's name,
    or a stored run's id or unique prefix; default: the last complete run under today's plan):
    per context, the changed fragments and tools, the changed inputs (photos, manuals,
    catalogue and ticket records), and the items each touches. None when there is no
    baseline to compare with."""
    options = options or RunOptions()
    items = select(options.selection)
    settings = app_settings()
    model, plan = _model_and_plan(settings, items, options)
    return in_store(lambda s: _impact(s, items, plan, model, against))


def _model_and_plan(settings: Settings, items: Sequence[EvalItem], options: RunOptions
                    ) -> tuple[str, PlanInfo]:
    """Today's chat model id and the plan the run would have, without starting a model."""
    unstarted = settings.model_copy(update={
        "local_model_url": settings.local_model_url or UNSTARTED_URL,
        "local_prefix_cache": None})
    try:
        model = model_for_job(unstarted, "chat", options.model).model_id
        judge = None
        if any(i.judged for i in items):
            judge_model = model_for_job(unstarted, "judge", options.judge.model)
            pack = load_pack_prompt(options.judge.pack) if options.judge.pack else None
            judge = JudgeSetup(judge_model, trust(judge_model.model_id, MAKERSPACE.hash()),
                               pack=pack)
        visitor = visitor_for(unstarted, items)
    except (ModelCallError, PackError, JudgesFileError) as exc:
        raise ApiError(f"cannot tell the impact: {exc}") from exc
    return model, plan_for(items, judge, options.repeat, options.selection, options.rule,
                           visitor)


async def _impact(settings: Settings, items: list[EvalItem], plan: PlanInfo, model: str,
                  against: str | None) -> Impact | None:
    async with open_store(settings) as store:
        baseline = await _baseline(store, against) if against else \
            await last_baseline(store, plan)
    if baseline is None:
        return None
    fragments: dict[str, dict[str, str]] = {}
    async with fixture_env(settings) as env:
        contexts = await all_contexts(env, items, fragments)
    return impact(contexts, items, plan, model, agent_settings(settings), baseline, fragments)


async def _baseline(store: RunStore, against: str) -> Baseline:
    """A comparison point by name, else a stored run by id or unique prefix."""
    try:
        point = await store.load_point(against)
    except StoreError as no_point:
        try:
            return await run_baseline(store, against)
        except StoreError as no_run:
            raise ApiError(f"--against {against!r} is neither a comparison point nor one"
                           f" stored run: {no_point}; {no_run}") from None
    return Baseline(f"point {point.name} (saved {point.created[:16]}"
                    + (f", from run {point.from_run})" if point.from_run else ")"),
                    point.agent, point.plan)
