"""The eval operations as MCP tools for a coding assistant (`python -m evals mcp`, stdio, the
official `mcp` SDK): run_evals, compare, draft_cases, show_prompt, calibrate_judge, list_runs.

Runs, comparisons and calibrations are the CLI in a child process (as from the workspace), so
they behave exactly as on the command line; a run's progress is reported as its cases are
stored. Inputs are validated (names against the case and scenario files, counts in range)
before anything starts. What goes back is data from the run store and the artifacts, passed
through the same redaction as the artifact: no secret is ever returned.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
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
from evals.authoring.draft import DraftError, draft_for, render
from evals.authoring.told import PromptError, told_for
from evals.cli.common import app_settings, open_store
from evals.load.cases import CaseFileError
from evals.load.selection import select_items
from evals.record.artifact import ArtifactError, read_run
from evals.record.fingerprint import Selection
from evals.record.listings import LaunchedRun, StoredComparison
from evals.record.run import RunRecord
from evals.record.store import StoreError
from evals.report.attribution import diff_lines
from evals.workspace.launch import POINT_NAME, Job, Launcher, Request

Names = Annotated[str | None, Field(default=None, max_length=2000,
                                    pattern=r"^[A-Za-z0-9 ,_@.-]*$",
                                    description="comma list of case/scenario files or ids")]
Role = Literal["student", "staff", "super_admin"] | None
Page = Annotated[str, Field(default="/", max_length=200, pattern=r"^/[A-Za-z0-9/_-]*$")]
POLL_S = 1.0


def _clean(value: Any) -> Any:
    """A tool's answer, redacted like the artifact (a secret-looking value never leaves)."""
    return json.loads(redact(json.dumps(value, default=str)))


async def _follow(launcher: Launcher, request: Request, title: str, ctx: Context | None
                  ) -> tuple[Job, list[LaunchedRun]]:
    """Start the CLI in a child process and report its stored cases as progress."""
    job = launcher.start(request, title)
    assert job.task is not None
    async with open_store(app_settings()) as store:
        while not job.task.done():
            await asyncio.sleep(POLL_S)
            if ctx is None:
                continue
            runs = await store.launched(job.id)
            done = sum(sum(r.counts.values()) for r in runs)
            total = sum((r.items or 0) * (r.repeat or 1) for r in runs) or None
            await ctx.report_progress(done, total, f"{title}: {done} finished")
        await job.task
        runs = await store.launched(job.id)
    return job, runs


def compare_answer(row: StoredComparison) -> dict[str, Any]:
    """The compare tool's answer: the counts, the verdict, every pair, and why the moved
    items moved (per shared change: the items, the change in a line, and its diff)."""
    result = row.result
    return _clean({"comparison_id": row.id, "point": row.point,
                   "baseline_run": row.baseline_run, "current_run": row.current_run,
                   "counts": result.counts, "verdict": result.verdict,
                   "p_value": result.p_value,
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

    def ready(model: str | None = None) -> Path:
        if shared.busy:
            raise ToolError("a run is under way: wait for it")
        shared.env = dict(env if env is not None else os.environ)
        if model:
            shared.env["EVAL_MODEL"] = model
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
                        ctx: Context | None = None) -> dict[str, Any]:
        """Run cases and scenarios (all by default) on today's agent. Returns the run id, the
        totals and each case that did not pass, with its failed checks."""
        names = tuple(n.strip() for n in (cases or "").split(",") if n.strip())
        wanted = tuple(g.strip() for g in (groups or "").split(",") if g.strip())
        try:
            items = await asyncio.to_thread(select_items, Selection(
                names=names, groups=wanted, full=mode == "full"))
        except CaseFileError as exc:
            raise ToolError(redact(str(exc))) from exc
        if not items:
            raise ToolError("that selection holds no case and no scenario")
        artifacts = ready(model)
        job, _ = await _follow(shared, Request(mode=mode, names=names, groups=wanted,
                                               repeat=repeat), "run", ctx)
        artifact = artifacts / f"{job.id}.json"
        record = await asyncio.to_thread(_read, artifact)
        if record is None or not record.run_id:
            raise failed("the run did not finish", job)
        failures = [{"id": c.id, "file": c.file, "status": c.status,
                     "checks": [{"kind": k.kind, "reason": k.reason}
                                for k in (c.attempts[-1].checks if c.attempts else [])
                                if not k.passed] or
                     ([{"kind": "error", "reason": c.attempts[-1].error}]
                      if c.attempts and c.attempts[-1].error else []),
                     "skipped": c.skipped_reason}
                    for c in record.cases if c.status != "PASS"]
        return _clean({"run_id": record.run_id, "status": record.status,
                       "model": record.models.chat, "totals": record.totals.model_dump(),
                       "failures": failures, "exit_code": job.returncode})

    @server.tool()
    async def compare(point: Annotated[str, Field(max_length=64)],
                      ctx: Context | None = None) -> dict[str, Any]:
        """Run a saved comparison point's frozen agent and today's under the point's plan,
        and pair their cases: improved, regressed, unchanged, uncertain; and for the moved
        ones, what changed for their context (prompt fragments, tool schemas, model)."""
        if not POINT_NAME.match(point):
            raise ToolError(f"point {point!r}: letters, digits, '.', '_' and '-'")
        async with open_store(app_settings()) as store:
            try:
                await store.load_point(point)
            except StoreError as exc:
                raise ToolError(redact(str(exc))) from exc
        ready()
        job, runs = await _follow(shared, Request(compare_with=point),
                                  f"comparison with {point}", ctx)
        ours = {r.id for r in runs}  # the runs this launch stored
        async with open_store(app_settings()) as store:
            mine = [r for r in await store.list_comparisons(1000)
                    if r.baseline_run in ours and r.current_run in ours]
            if not mine:
                raise failed("the comparison did not finish", job)
            return compare_answer(await store.load_comparison(mine[0].id))

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
        args = ["calibrate", "--set", set, "--json", "--limit", str(limit)]
        if set == "mrbench":
            if not file:
                raise ToolError("set mrbench needs file: the MRBench V2 JSON's path")
            path = await asyncio.to_thread(_project_file, file)
            args.append(f"--file={path}")  # one argument: a path is never read as an option
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "evals", *args, env=dict(env if env is not None else
                                                           os.environ),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await process.communicate()
        text = out.decode("utf-8", "replace")
        start = text.find("{")
        if process.returncode != 0 or start < 0:
            raise ToolError("calibration failed: " + redact(err.decode("utf-8", "replace")
                                                            [-2000:]))
        return _clean(json.loads(text[start:]))

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
