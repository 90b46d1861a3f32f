"""The commands that run cases and keep what they ran: run, runs, point, compare, gate."""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from app.settings import MODEL_JOBS, Settings, get_settings
from evals.execute.runner import DEFAULT_CONCURRENCY, MAX_ATTEMPTS, JudgeSetup
from evals.load.cases import Case, CaseFileError, load_cases, select, select_groups
from evals.load.selection import has_scenarios, select_items, with_visitor
from evals.record.fingerprint import PlanInfo, plan_changes, plan_info
from evals.record.results import RunRecord
from evals.record.store import StoreError
from evals.report.console import (
    ARTIFACT,
    conversation_lines,
    exit_code,
    print_report,
    write_atomically,
    write_record,
)
from evals.report.stats import stats_lines

T = TypeVar("T")
# Settings that would point the app at live data: the evals blank them and say so.
LIVE_DATA_SETTINGS = ("catalog_source", "blob_base_url", "blob_dir")


def eval_settings() -> Settings:
    settings = get_settings()
    blanked = [n.upper() for n in LIVE_DATA_SETTINGS if getattr(settings, n)]
    if blanked:
        print(f"note: {', '.join(blanked)} ignored: evals run on the fixture catalogue and the"
              " fixture manuals only", file=sys.stderr)  # stdout may be YAML or MCP
    return settings.model_copy(update={n: None for n in LIVE_DATA_SETTINGS})


def judge_setup(settings: Any, cases: list[Case], args: argparse.Namespace
                ) -> JudgeSetup | None:
    """The run's judge (None without judged cases) and whether its verdicts decide."""
    from app.chat.models import model_for_job
    from evals.judge import MAKERSPACE
    from evals.judge.trust import trust
    from evals.load.packs import load_pack_prompt

    if not any(c.judged for c in cases):
        return None
    model = model_for_job(settings, "judge", args.judge_model)
    ref = getattr(args, "judge_pack", None)
    pack = load_pack_prompt(ref) if ref else None  # PackError: said by the caller
    setup = JudgeSetup(model, trust(model.model_id, MAKERSPACE.hash()), args.trust_judge, pack,
                       trust(model.model_id, pack.hash(MAKERSPACE.hash())) if pack else None)
    n = sum(c.judged for c in cases)
    if pack is not None and setup.pack_trust is not None:
        cases_n = sum(1 for c in cases if getattr(c, "rubric", None) or
                      getattr(c, "must_not", None))
        print(f"judge: {cases_n} judged cases rated with pack {pack.ref} ({pack.description}),"
              f" prompt {setup.prompt_hash}, instead of their own rubrics;"
              + (" its verdicts decide" if setup.pack_trust.trusted else
                 " its verdicts decide on --trust-judge only" if setup.forced else
                 " advisory (it has no calibration of its own)")
              + f": {setup.pack_trust.reason}")
    if setup.trust.trusted:
        print(f"judge: {model.model_id} decides {n} judged cases ({setup.trust.reason})")
    elif setup.forced:
        print(f"judge: {model.model_id} decides {n} judged cases on --trust-judge only:"
              f" {setup.trust.reason}")
    else:
        print(f"judge: {model.model_id} is advisory, its {n} judged cases stay UNDECIDED:"
              f" {setup.trust.reason}")
    return setup


def start_models(settings: Settings, cases: list[Case], args: argparse.Namespace,
                 *refs: str | None) -> tuple[list[Any], JudgeSetup | None] | None:
    """The chat models asked for and the run's judge; None, said on stderr, when one of them
    cannot be had."""
    from app.chat.models import ModelCallError, model_for_job
    from evals.load.packs import PackError

    try:
        models = [model_for_job(settings, "chat", ref) for ref in refs]
        return models, judge_setup(settings, cases, args)
    except (ModelCallError, PackError) as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return None


def fail_on_skip(args: argparse.Namespace) -> bool:
    return args.fail_on_skip if args.fail_on_skip is not None else bool(args.model)


def env_bool(name: str) -> bool | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    return value.strip().lower() in ("1", "true", "yes", "on")


def progress_bar(total: int, stream: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> Callable[[str | None], None]:
    """Progress on stderr, called with "STATUS id" per finished case (None at the end). On a
    terminal, a bar with the time left; otherwise (a CI log) one line per finished case:
    status, id, elapsed, cases left and the estimated time left."""
    stream = stream or sys.stderr
    if stream.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, unit="case", file=stream, leave=False,
                   bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {remaining} left]"
                              " {postfix}")

        def tick(item: str | None) -> None:
            if item is None:
                bar.close()
            else:
                bar.set_postfix_str(item)
                bar.update(1)

        return tick
    started = clock()
    done = [0]

    def line(item: str | None) -> None:
        if item is None:
            return
        done[0] += 1
        elapsed = clock() - started
        left = max(total - done[0], 0)
        eta = elapsed / done[0] * left
        print(f"[{done[0]}/{total}] {item}  {_clock(elapsed)} elapsed · {left} left ·"
              f" about {_clock(eta)} to go", file=stream, flush=True)

    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}:{secs:02d}"


def selected_cases(args: argparse.Namespace) -> list[Case]:
    return select_groups(select(load_cases(), args.cases), args.group)


def selection_spec(args: argparse.Namespace) -> str | None:
    source = getattr(args, "case_file", None)
    parts = [f"file={source}" if source else "", f"cases={args.cases}" if args.cases else "",
             f"groups={args.group}" if args.group else "",
             "only=cases" if getattr(args, "cases_only", False) else "",
             "only=scenarios" if getattr(args, "scenarios_only", False) else "",
             "styles=full" if getattr(args, "full", False) else ""]
    return "; ".join(p for p in parts if p) or None


def with_models(args: argparse.Namespace, cases: list[Case], models: list[str | None],
                body: Callable[[Settings], Coroutine[Any, Any, int]]) -> int:
    """Start the embedded model if any of these chat models (or the judge) is it, then run."""
    from app.localmodel import local_model_settings, uses_local_model
    from app.localmodel.server import LocalModelError
    from evals.judge.trust import JudgesFileError
    from evals.record.store import StoreError

    settings = eval_settings()
    local = any(uses_local_model(settings, m) for m in models) or (
        any(c.judged for c in cases) and uses_local_model(settings, args.judge_model, "judge")
    ) or (has_scenarios(cases) and uses_local_model(settings, None, "sim_user"))
    if any(uses_local_model(settings, m) for m in models) and \
            "EVAL_CONCURRENCY" not in os.environ and args.concurrency == DEFAULT_CONCURRENCY:
        args.concurrency = settings.local_model_parallel  # one case per server slot
    try:
        with local_model_settings(settings, local) as settings:
            return run_closing(body(settings))
    except LocalModelError as exc:
        print(f"local model: {exc}", file=sys.stderr)
        return 2
    except (StoreError, JudgesFileError) as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


async def _closing(body: Coroutine[Any, Any, T]) -> T:
    """Run a command's body, then close the model clients it opened on this loop."""
    from app.chat.openai_wire import close_clients

    try:
        return await body
    finally:
        await close_clients()


def run_closing(body: Coroutine[Any, Any, T]) -> T:
    """asyncio.run for a command: the model clients are closed before the loop ends."""
    return asyncio.run(_closing(body))


def plan_for(cases: list[Case], judge: JudgeSetup | None, repeat: int,
             selection: str | None) -> PlanInfo:
    return plan_info(cases, judge_model=judge.model.model_id if judge else None,
                     judge_prompt_hash=judge.prompt_hash if judge else None, repeat=repeat,
                     selection=selection)


def print_start(model_id: str, cases: list[Case], repeat: int, settings: Settings,
                 versions: int = 1) -> None:
    conversations: list[Any] = [c for c in cases if has_scenarios([c])]
    turns = sum(c.scenario.max_turns for c in conversations)
    singles = len(cases) - len(conversations)
    n = (singles + turns) * repeat * versions
    calls_max = n * (settings.max_tool_steps + 1) * MAX_ATTEMPTS
    what = f"{singles} cases" + (f" + {len(conversations)} scenario conversations (at most"
                                 f" {turns} visitor turns)" if conversations else "")
    print(f"model: {model_id} · {what} × {repeat} repetition(s)"
          + (f" × {versions} versions" if versions > 1 else "")
          + f" · at least {singles * repeat * versions} model calls, at most {calls_max}"
          " (every turn, tool step and retry; the visitor's and judge's calls apart)")


@contextmanager
def stop_on_signals(controls: Any) -> Iterator[dict[str, signal.Signals]]:
    """Ctrl-C or SIGTERM stops the run gracefully: no new model call, cases in flight get
    GRACE_S, what finished is kept. Yields what was received."""
    from evals.execute.runner import GRACE_S

    loop = asyncio.get_running_loop()
    got: dict[str, signal.Signals] = {}

    def handler(sig: signal.Signals) -> None:
        if "signal" not in got:
            got["signal"] = sig
            print(f"\n{sig.name}: stopping: no new model call; cases in flight get"
                  f" {GRACE_S:.0f} s", file=sys.stderr)
        controls.stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, handler, sig)
    try:
        yield got
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _exit_for(got: dict[str, signal.Signals]) -> int | None:
    if "signal" not in got:
        return None
    return 128 + int(got["signal"])  # 130 for SIGINT, 143 for SIGTERM


def _cost_controls(args: argparse.Namespace, model_id: str, judge: JudgeSetup | None,
                   cases: list[Any]) -> Any:
    """The run's cost cap. Every model the run calls counts toward it (the chat model, the
    judge, the simulated visitors), so each must have a known price."""
    from app.chat.model_info import price_per_token
    from evals.execute.session import Controls

    cap = getattr(args, "max_cost", None)
    if cap is None:
        return Controls()
    called = [("chat model", model_id)]
    if judge is not None:
        called.append(("judge", judge.model.model_id))
    called += [("visitor", m) for m in sorted({c.visitor_model.model_id for c in cases
                                               if getattr(c, "visitor_model", None)})]
    for role, called_id in called:
        if price_per_token(called_id) is None:
            raise ValueError(f"--max-cost: the price of {called_id} (the {role}) is unknown,"
                             " so a cost cap cannot be kept; leave it out for this model")
    return Controls(max_cost_usd=cap)


async def run_once(cases: list[Case], args: argparse.Namespace, settings: Settings, *,
                   resume: RunRecord | None = None) -> int:
    """`python -m evals run` (and `resume`): one run of today's agent, stored as it goes."""
    from evals.execute.session import Version, prepared, run_versions

    started = start_models(settings, cases, args, args.model)
    if started is None:
        return 2
    (model,), judge = started
    if has_scenarios(cases):
        from app.chat.models import model_for_job

        cases = with_visitor(cases, model_for_job(settings, "sim_user"))
    try:
        controls = _cost_controls(args, model.model_id, judge, cases)
    except ValueError as exc:
        print(f"cannot start: {exc}", file=sys.stderr)
        return 2
    plan = plan_for(cases, judge, args.repeat, selection_spec(args))
    if resume is not None:
        if resume.plan is None or resume.plan.fingerprint != plan.fingerprint:
            print(f"run {resume.run_id} ran another plan; it cannot be resumed under this"
                  " one:", file=sys.stderr)
            for line in plan_changes(resume.plan, plan) if resume.plan else []:
                print(f"  {line}", file=sys.stderr)
            return 2
        plan = resume.plan
    # The artifact says at once that a run is under way: an old one never looks current.
    write_record(RunRecord(status="running", started=dt.datetime.now(dt.UTC).isoformat()),
                 args.artifact)
    todo = len(cases) * args.repeat - (len(resume.cases) if resume else 0)
    print_start(model.model_id, cases, args.repeat, settings)
    progress = progress_bar(todo)
    async with prepared(settings) as prep:
        with stop_on_signals(controls) as got:
            records = await run_versions(
                prep, cases, [Version("current", model, ref=asked_model(settings, args))], plan,
                concurrency=args.concurrency, vision=env_bool("EVAL_VISION"), judge=judge,
                progress=progress,
                settings_extra={**_extra(settings, model.model_id), "pid": os.getpid(),
                                **pack_settings(judge)},
                controls=controls, resume=resume)
    progress(None)
    record = records["current"]
    report_run(record)
    print(f"run: {record.run_id} (stored) · artifact: {write_record(record, args.artifact)}")
    if args.junit:
        from evals.report.junit import write_junit

        print(f"junit: {write_junit(record, args.junit)}")
    if record.status == "interrupted":
        print(f"interrupted: {len(record.cases)} finished, {len(record.unfinished)} not run;"
              f" python -m evals resume {record.run_id} runs the rest", file=sys.stderr)
        return _exit_for(got) or 1
    code = exit_code(record.cases, fail_on_skip=fail_on_skip(args))
    capped = [r for r in record.cases if (r.skipped_reason or "").startswith("cost cap")]
    if capped:
        print(f"cost cap reached: {len(capped)} case(s) not run", file=sys.stderr)
        return code or 1
    return code


def resume(args: argparse.Namespace) -> int:
    """`python -m evals resume [RUN]`: run what an interrupted run left, into the same run."""
    try:
        run = store_value(lambda s: _resumable(s, args.run))
    except StoreError as exc:
        print(exc, file=sys.stderr)
        return 2
    if run.plan is None or run.agent is None:
        print(f"run {run.run_id} has no plan or agent: it cannot be resumed", file=sys.stderr)
        return 2
    spec = dict(part.split("=", 1) for part in (run.plan.selection or "").split("; ") if part)
    for name, value in (("case_file", Path(spec["file"]) if "file" in spec else None),
                        ("cases", spec.get("cases")), ("group", spec.get("groups")),
                        ("cases_only", spec.get("only") == "cases"),
                        ("scenarios_only", spec.get("only") == "scenarios"),
                        ("full", spec.get("styles") == "full"),
                        ("model", point_ref(run.agent)), ("judge_model", run.judge_model),
                        ("repeat", run.plan.repeat), ("junit", None),
                        ("judge_pack", run.settings.get("judge_pack")),
                        ("trust_judge", run.judge_trusted_by_flag)):
        setattr(args, name, value)
    try:
        cases = select_items(args)
    except CaseFileError as exc:
        print(f"the run's cases no longer load: {exc}", file=sys.stderr)
        return 2
    print(f"resuming run {run.run_id}: {len(run.cases)} finished, {len(run.unfinished)} to run")
    return with_models(args, cases, [args.model],
                       lambda settings: run_once(cases, args, settings, resume=run))


async def _resumable(settings: Settings, ref: str | None) -> RunRecord:
    import psutil

    async with await open_store(settings) as store:
        if ref is None:
            rows = [r for r in await store.list_runs(200) if r["status"] != "complete"]
            if not rows:
                raise StoreError("no interrupted run to resume (python -m evals runs)")
            ref = str(rows[0]["id"])
        run = await store.load_run(ref)
    pid = run.settings.get("pid")
    alive = isinstance(pid, int) and pid != os.getpid() and psutil.pid_exists(pid)
    if run.status == "complete" or (run.status == "running" and alive):
        raise StoreError(f"run {run.run_id} is {run.status}"
                         + (f" (process {pid} is still running it)" if alive else "")
                         + ": nothing to resume")
    return run


def asked_model(settings: Settings, args: argparse.Namespace) -> str:
    """How today's chat model is asked for: what a point needs to run it again."""
    return str(args.model or settings.model_for("chat"))


def point_ref(agent: Any) -> str:
    """How to ask for a frozen agent's model again."""
    return str(agent.model_ref or agent.model)


def prefix_lines() -> list[str]:
    """What the embedded model's saved prompt prefixes did in this process."""
    from app.chat.models import PREFIX_CACHES

    lines = []
    for cache in PREFIX_CACHES.values():
        lines.append(f"prefix cache: {cache.hits} restored from disk, {cache.saves} computed"
                     f" and saved ({cache.folder})")
        lines += [f"prefix cache: {failure}" for failure in cache.failures[:3]]
    return lines


def cut_lines(cases: list[Any]) -> list[str]:
    """The replies a model ended at its token cap: a looping model is cut, and said so."""
    from app.chat.models import LOCAL_MAX_TOKENS

    cut = [(r.id, a.usage.get("cut_at_cap", 0)) for r in cases for a in r.attempts
           if a.usage.get("cut_at_cap")]
    if not cut:
        return []
    ids = sorted({i for i, _ in cut})
    return [f"cut at the token cap: {sum(n for _, n in cut)} model repl(ies) in {len(cut)}"
            f" attempt(s) ended at the cap (the embedded model's is {LOCAL_MAX_TOKENS}"
            f" tokens): {', '.join(ids[:8])}{' …' if len(ids) > 8 else ''}"]


def pack_settings(judge: JudgeSetup | None) -> dict[str, Any]:
    """The evaluator pack a run's judge used, and its prompt hash, for the run record."""
    if judge is None or judge.pack is None:
        return {}
    return {"judge_pack": judge.pack.ref, "judge_prompt_hash": judge.prompt_hash}


def _extra(settings: Settings, chat_model: str) -> dict[str, Any]:
    return {"models": {"chat": chat_model, **{job: settings.model_for(job)
                                               for job in MODEL_JOBS if job != "chat"}}}


def report_run(record: RunRecord) -> None:
    print_report(record.cases, sys.stdout, trusted_by_flag=record.judge_trusted_by_flag)
    for line in [*stats_lines(record.cases), *conversation_lines(record.cases),
                 *cut_lines(record.cases), *prefix_lines()]:
        print(line)
    costs = [a.cost_usd for r in record.cases for a in r.attempts]
    known = [c for c in costs if c is not None]
    unknown = len(costs) - len(known)
    if known:
        print(f"cost: ${sum(known):.4f}" + (f" (+ {unknown} attempt(s) at an unknown price)"
                                            if unknown else ""))
    elif costs:
        print(f"cost: unknown ({record.models.get('chat')} has no price in litellm's table)")


def html_report(args: argparse.Namespace) -> int:
    """`python -m evals report [RUN | COMPARISON] --html FILE`."""
    from evals.report.html import render_run
    from evals.report.rescore import ArtifactError, load_artifact

    ref = args.run
    try:
        if ref is None or Path(ref).is_file():
            record = load_artifact(Path(ref) if ref else ARTIFACT)
            text, what = render_run(record), f"{len(record.cases)} cases, run {record.run_id}"
        else:
            text, what = store_value(lambda settings: _stored_report(settings, ref))
    except (ArtifactError, StoreError) as exc:
        print(exc, file=sys.stderr)
        return 2
    write_atomically(args.html, text)
    print(f"report: {args.html} ({what})")
    return 0


async def _stored_report(settings: Settings, ref: str) -> tuple[str, str]:
    """A stored run's page, or a stored comparison's (both runs with their pairs)."""
    from evals.report.compare import Comparison
    from evals.report.html import render_comparison, render_run

    async with await open_store(settings) as store:
        try:
            record = await store.load_run(ref)
        except StoreError as not_a_run:
            try:
                row = await store.load_comparison(ref)
            except StoreError:
                if "ambiguous" in str(not_a_run):
                    raise not_a_run from None
                raise StoreError(f"no stored run or comparison {ref!r} (python -m evals runs"
                                 " lists the runs)") from None
            result = Comparison.model_validate(row["result"])
            base = await store.load_run(row["baseline_run"])
            cur = await store.load_run(row["current_run"])
            return (render_comparison(row["id"], result, base, cur),
                    f"comparison {row['id']}, {len(result.cases)} cases paired")
    return render_run(record), f"{len(record.cases)} cases, run {record.run_id}"


def workspace(args: argparse.Namespace) -> int:
    """`python -m evals workspace`: serve the workspace on 127.0.0.1 until Ctrl-C."""
    import secrets

    import uvicorn

    from app.db import resolve_conninfo
    from evals.workspace import create_workspace
    from evals.workspace.launch import Launcher

    settings = eval_settings()
    url = settings.database_url.get_secret_value() if settings.database_url else None
    token = secrets.token_urlsafe(24)
    launcher = Launcher(artifacts=Path(settings.data_dir) / "workspace-runs")
    app = create_workspace(resolve_conninfo(url, settings.data_dir), token, launcher=launcher)
    print(f"workspace: http://127.0.0.1:{args.port}/?token={token}  (Ctrl-C stops it)")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")
    return 0


# runs ----------------------------------------------------------------------------------------

def runs(args: argparse.Namespace) -> int:
    async def body(settings: Settings) -> int:
        from app.db import resolve_conninfo
        from evals.record.store import RunStore

        url = settings.database_url.get_secret_value() if settings.database_url else None
        async with RunStore.open(resolve_conninfo(url, settings.data_dir)) as store:
            rows = await store.list_runs()
        if not rows:
            print("no stored runs yet: python -m evals run")
        for r in rows:
            t = r["totals"] or {}
            print(f"{r['id']}  {r['started_at']:%Y-%m-%d %H:%M}  {r['status']:<11}"
                  f" {r['model']:<40} plan {r['plan_fingerprint'][:8]}"
                  f"  {t.get('passed', 0)}/{t.get('cases', 0)} passed"
                  + (f"  (point {r['point']})" if r["point"] else ""))
        return 0

    return store_only(body)


def store_only(body: Callable[[Settings], Coroutine[Any, Any, int]]) -> int:
    try:
        return asyncio.run(body(eval_settings()))
    except StoreError as exc:
        print(exc, file=sys.stderr)
        return 2


async def open_store(settings: Settings) -> Any:
    from app.db import resolve_conninfo
    from evals.record.store import RunStore

    url = settings.database_url.get_secret_value() if settings.database_url else None
    return RunStore.open(resolve_conninfo(url, settings.data_dir))


def store_value(body: Callable[[Settings], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(body(eval_settings()))
