"""A stored run run again: what an interrupted run left, into that run (`resume`), and the
items a run did not pass, as a new run linked to it (`rerun_failed`)."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import psutil

from app.settings import Settings
from evals.api.errors import ApiError
from evals.api.options import JudgeChoice, RunOptions
from evals.api.runs import RunResult, run_once, select
from evals.api.setup import in_store, open_store, with_models
from evals.execute.agent import as_recorded
from evals.load.cases import CaseFileError
from evals.load.selection import select_items
from evals.record.artifact import ARTIFACT, ArtifactError, read_run
from evals.record.fingerprint import Selection
from evals.record.run import RunRecord
from evals.record.store import RunLocked, RunStore, StoreError
from evals.settings import eval_settings


def resume(run: str | None = None, *, concurrency: int | None = None,
           artifact: Path | None = None, fail_on_skip: bool | None = None,
           max_cost: float | None = None, ray: str | None = None,
           progress: bool = True, allow_unpriced: bool = False) -> RunResult:
    """Run what an interrupted run left, into the same run (`run`: its id or a unique prefix;
    default the newest unfinished one), under its plan, with the agent it began with. The run
    is locked in the store while this runs it: a second resume is refused. The cases of the
    run that its artifact (`artifact`, the one this resume writes) holds and the store lacks
    (a store that failed mid-run) are put in the store first, as `runs --import` does: they
    are kept, not run again."""
    path = artifact or ARTIFACT
    written = _artifact_run(path)
    record = in_store(lambda settings: _resumable(settings, run, written, path))
    try:
        return _resume_locked(record, concurrency, artifact, fail_on_skip, max_cost, ray,
                              progress, allow_unpriced)
    finally:
        try:
            in_store(lambda settings: _unlock(settings, record.run_id or ""))
        except Exception as exc:  # the run's outcome stands; a dead holder's lock is taken over
            print(f"warning: run {record.run_id}: its lock was not released"
                  f" ({type(exc).__name__}: {exc}); the next resume takes it over once this"
                  " process is gone", file=sys.stderr)


def _resume_locked(run: RunRecord, concurrency: int | None, artifact: Path | None,
                   fail_on_skip: bool | None, max_cost: float | None, ray: str | None,
                   progress: bool, allow_unpriced: bool = False) -> RunResult:
    if run.plan is None or run.agent is None:
        raise ApiError(f"run {run.run_id} has no plan or agent: it cannot be resumed")
    if run.models.endpoint:
        raise ApiError(f"run {run.run_id} sent its cases to an endpoint ({run.models.endpoint});"
                       " an endpoint run is not resumed: run it again")
    selection = run.plan.selection or Selection()
    options = RunOptions(
        selection=selection, model=run.agent.ref,
        judge=judge_of(run, auto_calibrate=eval_settings().auto_calibrate),
        concurrency=concurrency, repeat=run.plan.repeat,
        rule=run.plan.repeat_rule, fail_on_skip=fail_on_skip, max_cost=max_cost,
        allow_unpriced=allow_unpriced,
        vision=eval_settings().vision, cache=run.settings.cache or eval_settings().cache,
        ray=ray)
    if artifact is not None:
        options = dataclasses.replace(options, artifact=artifact)
    try:
        items = select_items(selection)
    except CaseFileError as exc:
        raise ApiError(f"the run's cases no longer load: {exc}") from exc
    print(f"resuming run {run.run_id}: {len(run.cases)} finished, {len(run.unfinished)} to run")
    began = run.agent.settings  # a resumed run finishes with the agent it began with
    return with_models(options, items, [options.model], lambda settings, opts, spend: run_once(
        items, opts, as_recorded(settings, began), resume=run, progress=progress,
        spend=spend))


def rerun_failed(run: str = "last", options: RunOptions | None = None, *,
                 progress: bool = True) -> RunResult | None:
    """The items that did not pass in a stored run (any status but PASS in any repetition),
    run again as a new run linked to it, under that run's plan: its selection narrowed to
    them, its repetitions, its judge (asked for again; `options.judge` says only whether it
    is advisory and calibrated first), its model unless `options.model` names another. None
    when nothing failed."""
    options = options or RunOptions()
    source = in_store(lambda settings: _run_to_rerun(settings, run))
    missed = failed_ids(source)
    left = f"; {len(source.unfinished)} repetition(s) never ran (python -m evals resume" \
        f" {source.run_id} runs them)" if source.unfinished else ""
    if not missed:
        print(f"run {source.run_id}: nothing failed, nothing to run again{left}")
        return None
    if source.plan is None:
        raise ApiError(f"run {source.run_id} has no plan: its items cannot be run again")
    if source.models.endpoint:
        raise ApiError(f"run {source.run_id} sent its cases to an endpoint"
                       f" ({source.models.endpoint}): run --endpoint again with --cases"
                       f" {','.join(missed)}")
    sel = source.plan.selection or Selection()
    # everything the run could have run, then its misses among them
    loaded = select(Selection(file=sel.file, only=sel.only, full=sel.full))
    items = [i for i in loaded if i.id in missed]
    gone = [cid for cid in missed if cid not in {i.id for i in items}]
    if gone:
        print(f"note: {len(gone)} item(s) of run {source.run_id} that did not pass are no"
              f" longer in the case files, not run: {', '.join(gone)}", file=sys.stderr)
    if not items:
        raise ApiError(f"none of the {len(missed)} item(s) that did not pass in run"
                       f" {source.run_id} is in the case files any more")
    print(f"running again {len(items)} item(s) that did not pass in run {source.run_id}:"
          f" {', '.join(i.id for i in items)}{left}")
    narrowed = Selection(file=sel.file, names=tuple(i.id for i in items), only=sel.only,
                         full=sel.full)
    options = dataclasses.replace(
        options, selection=narrowed,
        judge=judge_of(source, options.judge.advisory, options.judge.auto_calibrate),
        repeat=source.plan.repeat, rule=source.plan.repeat_rule,
        model=options.model or (source.agent.ref if source.agent else None))
    return with_models(options, items, [options.model], lambda settings, opts, spend: run_once(
        items, opts, settings, rerun_of=source.run_id, progress=progress, spend=spend))


def failed_ids(run: RunRecord) -> list[str]:
    """The items of a run with any repetition that did not pass, in the run's order."""
    return list(dict.fromkeys(r.id for r in run.cases if r.status != "PASS"))


async def _run_to_rerun(settings: Settings, ref: str) -> RunRecord:
    async with open_store(settings) as store:
        if ref == "last":
            rows = await store.list_runs(1)
            if not rows:
                raise ApiError("no stored run to re-run the failures of (python -m evals runs)")
            ref = rows[0].id
        return await store.load_run(ref)


def judge_of(run: RunRecord, advisory: bool = False, auto_calibrate: bool = True
             ) -> JudgeChoice:
    """The judge a run was judged by, asked for again (and asked anyway when it was
    advisory, or `advisory` says so)."""
    return JudgeChoice(run.models.judge, run.settings.judge_pack, run.judge_trusted_by_flag,
                       run.settings.advisory_judge or advisory, auto_calibrate)


async def _resumable(settings: Settings, ref: str | None, written: RunRecord | None,
                     artifact: Path) -> RunRecord:
    """The run to resume, locked for this process: the lock is taken before the run is read,
    so two resumes cannot both see it unfinished. What its artifact holds (`written`, read
    from `artifact`) and the store lacks is merged into the store first."""
    async with open_store(settings) as store:
        if ref is None:
            rows = [r for r in await store.list_runs(200) if r.status != "complete"]
            if not rows:
                raise ApiError("no interrupted run to resume (python -m evals runs)")
            ref = rows[0].id
        run_id = await store.resolve_run(ref)
        try:
            await store.lock_run(run_id)
        except RunLocked as exc:
            raise ApiError(f"cannot resume: {exc}") from exc
        try:
            if written is not None and written.run_id == run_id:
                await _merge_artifact(store, written, artifact)
            run = await store.load_run(run_id)
            done = {f"{c.id}#{c.repetition}" for c in run.cases}  # merged ones included
            run = run.model_copy(update={"unfinished": [u for u in run.unfinished
                                                        if u not in done]})
            pid = run.settings.pid
            alive = pid is not None and pid != os.getpid() and psutil.pid_exists(pid)
            if run.status == "complete" or (run.status == "running" and alive):
                raise ApiError(f"run {run.run_id} is {run.status}"
                               + (f" (process {pid} is still running it)" if alive else "")
                               + ": nothing to resume")
        except BaseException:
            await store.unlock_run(run_id)
            raise
    return run


def _artifact_run(artifact: Path) -> RunRecord | None:
    """The run an artifact holds, if it can be read (one that cannot is said, and left to be
    rewritten)."""
    if not artifact.exists():
        return None
    try:
        return read_run(artifact)
    except ArtifactError as exc:
        print(f"warning: {artifact} is not read ({exc}): nothing of it is merged into the"
              " store, and the resume rewrites it", file=sys.stderr)
        return None


async def _merge_artifact(store: RunStore, written: RunRecord, artifact: Path) -> None:
    """Put the cases of the run that its artifact holds and the store lacks into the store
    (the run's lock is held): a run whose store failed partway has them in its artifact
    alone, and the resume rewrites the artifact from the store. An artifact that differs from
    the store refuses the resume, nothing written."""
    try:
        fresh, _ = await store.merge_cases(written)
    except StoreError as exc:
        raise ApiError(f"cannot resume: {exc}") from exc
    if fresh:
        print(f"resume: {fresh} finished case(s) of run {written.run_id} that the store lacked"
              f" are put in it from {artifact}, not run again")


async def _unlock(settings: Settings, run_id: str) -> None:
    async with open_store(settings) as store:
        await store.unlock_run(run_id)
