"""The eval operations as MCP tools for a coding assistant (`python -m evals mcp`, stdio, the
official `mcp` SDK): run_evals, compare, draft_cases, show_prompt, calibrate_judge, list_runs.

Runs, comparisons and calibrations are the CLI in a child process (as from the workspace), so
they behave exactly as on the command line; a run's progress is reported as its cases are
stored. A run or comparison given an idempotency key is launched once: the same key and
arguments again return it, other arguments under that key are refused. Inputs are validated
(names against the case and scenario files, counts in range) before anything starts. What goes
back is data from the run store and the artifacts, passed through the same redaction as the
artifact: no secret is ever returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from app.chat.models import ModelCallError
from app.localmodel import local_model_settings, uses_local_model
from app.localmodel.server import LocalModelError
from app.redact import redact
from app.settings import PROJECT_ROOT
from evals.api.calibrating import Calibrated
from evals.api.calibrating import calibrate_judge as measure_judge
from evals.api.errors import ApiError
from evals.api.matrix import stored_matrix
from evals.api.setup import app_settings, open_store
from evals.authoring.draft import DraftError, draft_for, render
from evals.authoring.told import PromptError, told_for
from evals.calibration.calibrate import to_json
from evals.load.cases import CaseFileError
from evals.load.selection import select_items
from evals.record.artifact import ArtifactError, read_run
from evals.record.fingerprint import Selection
from evals.record.launches import KEY_PATTERN, LaunchConflict
from evals.record.listings import LaunchedRun, StoredComparison
from evals.record.matrix import Matrix
from evals.record.run import RunRecord
from evals.record.store import StoreError
from evals.report.attribution import diff_lines
from evals.settings import eval_settings
from evals.workspace.launch import POINT_NAME, Job, Launched, Launcher, LaunchError, Request

Names = Annotated[str | None, Field(default=None, max_length=2000,
                                    pattern=r"^[A-Za-z0-9 ,_@.-]*$",
                                    description="comma list of case/scenario files or ids")]
Role = Literal["student", "staff", "super_admin"] | None
Key = Annotated[str | None, Field(default=None, pattern=KEY_PATTERN,
                                  description="an idempotency key the caller makes (a UUID):"
                                              " the same key and arguments again return the"
                                              " first launch")]
Page = Annotated[str, Field(default="/", max_length=200, pattern=r"^/[A-Za-z0-9/_-]*$")]
POLL_S = 1.0


def _clean(value: Any) -> Any:
    """A tool's answer, redacted like the artifact (a secret-looking value never leaves)."""
    return json.loads(redact(json.dumps(value, default=str)))


async def _follow(launcher: Launcher, request: Request, title: str, ctx: Context | None,
                  key: str | None = None) -> tuple[Launched, list[LaunchedRun]]:
    """Launch the CLI in a child process (or, for a repeated idempotency key, find the launch
    already made) and report its stored cases as progress while this process runs it."""
    async with open_store(app_settings()) as store:
        try:
            launched = await launcher.launch(store, request, title, key)
        except (LaunchError, LaunchConflict) as exc:
            raise ToolError(redact(str(exc))) from exc
        job = launched.job
        if job is not None and job.task is not None:
            while not job.task.done():
                await asyncio.sleep(POLL_S)
                if ctx is None:
                    continue
                runs = await store.launched(job.id)
                done = sum(sum(r.counts.values()) for r in runs)
                total = sum((r.items or 0) * (r.repeat or 1) for r in runs) or None
                await ctx.report_progress(done, total, f"{title}: {done} finished")
            await job.task
        runs = await store.launched(launched.id)
    return launched, runs


def run_answer(record: RunRecord, launched: Launched) -> dict[str, Any]:
    """The run_evals tool's answer: the run, its totals and each case that did not pass, with
    its failed checks (the exit code when this process ran it)."""
    failures = [{"id": c.id, "file": c.file, "status": c.status,
                 "checks": [{"kind": k.kind, "reason": k.reason}
                            for k in (c.attempts[-1].checks if c.attempts else [])
                            if not k.passed] or
                 ([{"kind": "error", "reason": c.attempts[-1].error}]
                  if c.attempts and c.attempts[-1].error else []),
                 "skipped": c.skipped_reason}
                for c in record.cases if c.status != "PASS"]
    job = launched.job
    return _clean({"run_id": record.run_id, "status": record.status,
                   "model": record.models.chat, "totals": record.totals.model_dump(),
                   "failures": failures, "exit_code": job.returncode if job else None,
                   "launch": launched.id, "repeated": launched.repeated})


def matrix_answer(m: Matrix) -> dict[str, Any]:
    """A matrix as the tool gives it: rows with each column's statuses and pass rate, the
    columns' figures with the replayed share, and each column against the baseline."""
    answer = m.model_dump(mode="json")
    for row, shown in zip(m.rows, answer["rows"], strict=True):
        for label, c in shown["cells"].items():
            c["pass_rate"] = row.cells[label].pass_rate
    for column, c in zip(answer["columns"], m.columns, strict=True):
        column["replayed_share"] = c.replayed_share
    return answer


def compare_answer(row: StoredComparison) -> dict[str, Any]:
    """The compare tool's answer: the counts, the verdict, each item's outcome (the unit the
    counts and the test use), every pair (a repetition's statuses), and why the moved items
    moved (per shared change: the items, the change in a line, and its diff)."""
    result = row.result
    return _clean({"comparison_id": row.id, "point": row.point,
                   "baseline_run": row.baseline_run, "current_run": row.current_run,
                   "counts": result.counts, "verdict": result.verdict,
                   "p_value": result.p_value, "items": result.cases,
                   "pairs": [p.model_dump(include={"id", "repetition", "baseline",
                                                   "current", "outcome", "why"})
                             for p in result.pairs],
                   "why_moved": [{"improved": g.improved, "regressed": g.regressed,
                                  "moved_but_undecided": g.unsettled,
                                  "contexts": g.contexts, "change": g.change.describe(),
                                  "diff": diff_lines(g.change)}
                                 for g in result.attribution]})


def create_server(env: dict[str, str] | None = None) -> MCPServer:
    server = MCPServer("makerlab-evals", instructions=(
        "Run the makerspace assistant's eval suite, compare versions, draft cases, show what"
        " the assistant is told, and check the judge. Runs use the configured models (the"
        " embedded one by default) and can take minutes."))

    # One launcher for the server: one run at a time, whichever tool started it. Its runs'
    # artifacts go to the data folder (git-ignored), as the workspace's do.
    shared = Launcher(env=env)

    def ready() -> Path:
        """The launcher's environment as this server was started with, and where its runs'
        artifacts go. (One run at a time: the launcher refuses a new one while another runs,
        but answers a repeated idempotency key with its launch.)"""
        if not shared.busy:
            shared.env = dict(env if env is not None else os.environ)
        shared.artifacts = Path(app_settings().data_dir) / "mcp-runs"
        return shared.artifacts

    def failed(what: str, job: Job) -> ToolError:
        return ToolError(redact(f"{what}: " + "\n".join(list(job.output)[-15:])))

    @server.tool()
    async def run_evals(cases: Names = None, groups: Names = None,
                        model: Annotated[str | None, Field(
                            default=None, max_length=200,
                            pattern=r"^[A-Za-z0-9][A-Za-z0-9_./:@-]*$")] = None,
                        repeat: Annotated[int, Field(ge=1, le=10)] = 1,
                        mode: Literal["quick", "full"] = "quick",
                        idempotency_key: Key = None,
                        ctx: Context | None = None) -> dict[str, Any]:
        """Run cases and scenarios (all by default) on today's agent. Returns the run id, the
        totals and each case that did not pass, with its failed checks. With an
        idempotency_key, a repeated call with the same key and arguments returns that run
        (never a second), and the same key with other arguments is refused."""
        names = tuple(n.strip() for n in (cases or "").split(",") if n.strip())
        wanted = tuple(g.strip() for g in (groups or "").split(",") if g.strip())
        try:
            items = await asyncio.to_thread(select_items, Selection(
                names=names, groups=wanted, full=mode == "full"))
        except CaseFileError as exc:
            raise ToolError(redact(str(exc))) from exc
        if not items:
            raise ToolError("that selection holds no case and no scenario")
        artifacts = ready()
        launched, runs = await _follow(shared, Request(mode=mode, names=names, groups=wanted,
                                                       repeat=repeat, model=model), "run", ctx,
                                       idempotency_key)
        job = launched.job
        if job is None:  # another process's launch, asked again: what the store holds of it
            if not runs:
                raise ToolError(f"the run launched with this idempotency key (launch"
                                f" {launched.id}) has stored nothing yet: ask again shortly")
            async with open_store(app_settings()) as store:
                record: RunRecord | None = await store.load_run(runs[0].id)
        else:
            record = await asyncio.to_thread(_read, artifacts / f"{job.id}.json")
        if record is None or not record.run_id:
            if job is None:  # another process's launch, whose run the store no longer gives
                raise ToolError(f"the run of launch {launched.id} could not be read from the"
                                " store")
            raise failed("the run did not finish", job)
        return run_answer(record, launched)

    @server.tool()
    async def compare(point: Annotated[str, Field(max_length=64)],
                      idempotency_key: Key = None,
                      ctx: Context | None = None) -> dict[str, Any]:
        """Run a saved comparison point's frozen agent and today's under the point's plan,
        and pair their cases: improved, regressed, unchanged, uncertain; and for the moved
        ones, what changed for their context (prompt fragments, tool schemas, model). With an
        idempotency_key, a repeated call with the same key and point returns that comparison
        (never a second), and the same key with another point is refused."""
        if not POINT_NAME.match(point):
            raise ToolError(f"point {point!r}: letters, digits, '.', '_' and '-'")
        async with open_store(app_settings()) as store:
            try:
                await store.load_point(point)
            except StoreError as exc:
                raise ToolError(redact(str(exc))) from exc
        ready()
        launched, runs = await _follow(shared, Request(compare_with=point),
                                       f"comparison with {point}", ctx, idempotency_key)
        ours = {r.id for r in runs}  # the runs this launch stored
        async with open_store(app_settings()) as store:
            mine = [r for r in await store.list_comparisons(1000)
                    if r.baseline_run in ours and r.current_run in ours]
            if not mine:
                if launched.job is None:
                    raise ToolError(f"the comparison launched with this idempotency key"
                                    f" (launch {launched.id}) is not stored yet: ask again"
                                    " once it has finished")
                raise failed("the comparison did not finish", launched.job)
            answer = compare_answer(await store.load_comparison(mine[0].id))
        return answer | {"launch": launched.id, "repeated": launched.repeated}

    @server.tool()
    async def show_prompt(role: Role = None, page: Page = "/",
                          selection: Names = None) -> dict[str, Any]:
        """What the assistant is told for an audience and page: the system prompt, this
        turn's context and the tools with their schemas (as /api/chat composes them)."""
        names = [n.strip() for n in (selection or "").split(",") if n.strip()] or None
        try:
            shown = await told_for(app_settings(), role, page, names)
        except PromptError as exc:
            raise ToolError(redact(str(exc))) from exc
        return _clean(shown.as_dict())

    @server.tool()
    async def draft_cases(role: Role = None, page: Page = "/",
                          capability: Annotated[str | None, Field(default=None,
                                                                  max_length=64)] = None,
                          count: Annotated[int, Field(ge=1, le=25)] = 8) -> dict[str, Any]:
        """Draft cases with the draft model for an audience and page, one per kind: the
        valid ones as case YAML (for a person to review), the rejected ones with the loader's
        reason, and the kinds still missing."""
        settings = app_settings()
        try:
            with local_model_settings(settings, uses_local_model(settings, None, "draft"),
                                      say=lambda *a: None) as settings:
                shown, result = await draft_for(settings, role, page, count, capability)
        except (PromptError, DraftError, ModelCallError, LocalModelError) as exc:
            raise ToolError(redact(str(exc))) from exc
        return _clean({"yaml": render(result, shown, "via MCP"),
                       "valid": [{"kind": k, "id": c["id"]} for k, c in result.cases],
                       "rejected": result.rejected, "missing": result.missing})

    @server.tool()
    async def calibrate_judge(set: Literal["makerspace", "mrbench"] = "makerspace",
                              file: Annotated[str | None, Field(default=None,
                                                                max_length=500)] = None,
                              limit: Annotated[int, Field(ge=1, le=500)] = 30
                              ) -> dict[str, Any]:
        """Check the judge model against people's verdicts on a labelled set (agreement,
        Cohen's kappa and whether it would decide cases). Saves nothing. Set mrbench reads
        `file`, a path under the project folder (relative to it, or absolute)."""
        path = None
        if set == "mrbench":
            if not file:
                raise ToolError("set mrbench needs file: the MRBench V2 JSON's path")
            path = await asyncio.to_thread(_project_file, file)

        def measure() -> Calibrated:
            # In-process, in a thread of its own (it runs its own event loop). What it says on
            # stdout is kept off the MCP stream, which has its own handle on the real stdout.
            with contextlib.redirect_stdout(io.StringIO()):
                return measure_judge(set, judge_model=eval_settings().judge_model, file=path,
                                     limit=limit)

        try:
            done = await asyncio.to_thread(measure)
        except ApiError as exc:
            raise ToolError("calibration failed: " + redact(str(exc))[-2000:]) from exc
        figures = {m.name: json.loads(to_json(m.result)) for m in done.measured}
        return _clean({"judge": done.judge, **(figures["makerspace"] if set == "makerspace"
                                                else {"dimensions": figures})})

    @server.tool()
    async def matrix(runs: Annotated[str, Field(max_length=400,
                                                pattern=r"^[A-Za-z0-9 ,_-]*$")],
                     baseline: Annotated[str | None, Field(default=None, max_length=64)] = None
                     ) -> dict[str, Any]:
        """Stored runs of one plan side by side (e.g. the runs one `python -m evals matrix`
        stored): per item each run's statuses and pass rate; per run its totals, latency,
        cost and replayed share; each run against the baseline (default: the first), paired
        per item, with McNemar's p and Holm's correction. Calls no model."""
        ids = [r.strip() for r in runs.split(",") if r.strip()]
        async with open_store(app_settings()) as store:
            try:
                m = (await stored_matrix(store, ids, baseline)).result
            except (StoreError, ApiError) as exc:
                raise ToolError(redact(str(exc))) from exc
        return _clean(matrix_answer(m))

    @server.tool()
    async def list_runs(limit: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
        """The stored runs, newest first: id, start, status, model, totals, point."""
        async with open_store(app_settings()) as store:
            rows = await store.list_runs(limit)
        return _clean({"runs": [{"run_id": r.id, "started": r.started_at.isoformat(),
                                 "status": r.status, "model": r.model,
                                 "totals": r.totals.model_dump() if r.totals else None,
                                 "point": r.point} for r in rows]})

    return server


def _project_file(file: str) -> Path:
    """A file the tools may read: under the project folder once every link and '..' is
    resolved (relative to the project). Any other path gets the same refusal whether or not
    it exists, so a caller learns nothing of the machine's files."""
    root = PROJECT_ROOT.resolve()
    if "\x00" in file:  # no path holds one (resolving it would raise)
        raise ToolError(f"file {file!r}: only a .json file under the project folder ({root}),"
                        " outside its hidden folders, is read")
    path = (root / file).resolve()  # an absolute `file` replaces the root
    # Never a hidden path (.data holds the session secret and the database, .env keys, .git
    # the history): what the calibration's errors quote would go back to the caller.
    if not path.is_relative_to(root) or path.suffix != ".json" or any(
            part.startswith(".") for part in path.relative_to(root).parts):
        raise ToolError(f"file {file!r}: only a .json file under the project folder ({root}),"
                        " outside its hidden folders, is read")
    if not path.is_file():
        raise ToolError(f"file {file!r}: no such file under the project folder")
    return path


def _read(path: Path) -> RunRecord | None:
    """The run record a launched run wrote, through the one reader (None: none written)."""
    if not path.exists():
        return None
    try:
        return read_run(path)
    except ArtifactError as exc:
        raise ToolError(redact(f"the run's artifact cannot be read: {exc}")) from exc


def serve() -> int:
    create_server().run("stdio")
    return 0
