"""Runs and comparisons started from the workspace: each is the CLI in a child process
(`python -m evals run …` or `compare …`), so it behaves exactly as on the command line (the
same models, guards, store and artifact) and a crash in it never takes the workspace down.

The child is told a launch id (EVAL_LAUNCH); the runs it stores carry it in their settings, so
the workspace finds them in the run store and shows their progress as cases finish. One launch
at a time: the embedded model has few slots, and two runs would only slow each other.

Each launch's exact request is kept in the run store (evals/record/launches.py), with the
idempotency key it came with: a repeated request with the same key gets the launch already
made, never a second run; the same key with another request is refused.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import signal
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from evals.record.launches import (
    LaunchRequest,
    StoredLaunch,
    claim_launch,
    launch_by_key,
    same_request,
    valid_key,
)
from evals.record.store import RunStore, new_run_id

ROOT = Path(__file__).resolve().parents[2]
OUTPUT_LINES = 200
SELECTION_ENV = ("EVAL_CASES", "EVAL_GROUPS", "EVAL_REPEAT", "EVAL_LAUNCH")
POINT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class LaunchError(ValueError):
    """A launch refused: the message says why."""


@dataclass(frozen=True)
class Launched:
    """A launch: its id (the one its runs carry), this process's job for it (None: another
    process started it), and whether it is an earlier launch answering a repeated request."""

    id: str
    job: Job | None
    repeated: bool = False


class Request(LaunchRequest):
    """What the Overview form (or an MCP tool) asks for: the exact request a launch keeps."""

    def argv(self) -> list[str]:
        """The run command's arguments (a comparison takes its selection from the point)."""
        if self.compare_with:
            return ["compare", "--", self.compare_with]
        args = ["run", f"--{self.mode}", *self._selection()]
        if self.kinds != "both":
            args.append(f"--{self.kinds}-only")
        return args

    def point_argv(self) -> list[str]:
        assert self.save_point
        return ["point", "save", *self._selection(), "--", self.save_point]

    def _selection(self) -> list[str]:
        """Repetitions, names and groups, one argument each: a name is never an option."""
        args = [f"--repeat={self.repeat}"]
        if self.names:
            args.append(f"--cases={','.join(self.names)}")
        if self.groups:
            args.append(f"--group={','.join(self.groups)}")
        return args


@dataclass
class Job:
    id: str
    title: str
    commands: list[list[str]]
    started: dt.datetime
    output: deque[str] = field(default_factory=lambda: deque(maxlen=OUTPUT_LINES))
    process: asyncio.subprocess.Process | None = None
    returncode: int | None = None
    stopping: bool = False
    task: asyncio.Task[None] | None = None
    model: str | None = None  # the chat model the request asked for (EVAL_MODEL)

    @property
    def running(self) -> bool:
        return self.returncode is None

    def shown_command(self) -> str:
        return " && ".join("python -m evals " + " ".join(c) for c in self.commands)


class Launcher:
    def __init__(self, env: dict[str, str] | None = None, artifacts: Path | None = None
                 ) -> None:
        self.env = dict(env if env is not None else os.environ)
        self.artifacts = artifacts
        self.jobs: dict[str, Job] = {}
        self.latest: Job | None = None
        # One launch at a time from check to start: two requests with different keys at once
        # (two tabs, parallel MCP calls) would otherwise both pass the busy check, and the
        # loser's key be kept with no run behind it.
        self._launching = asyncio.Lock()

    @property
    def busy(self) -> bool:
        return self.latest is not None and self.latest.running

    async def launch(self, store: RunStore, request: Request, title: str,
                     key: str | None = None) -> Launched:
        """Start a run or comparison, its exact request kept in the store under `key` (an
        idempotency key, or None). A key used before answers with that launch, never a
        second one, when the request is the same; LaunchConflict when it is not. A new launch
        is refused while another runs (LaunchError)."""
        async with self._launching:
            if key is not None:
                earlier = await launch_by_key(store, valid_key(key))
                if earlier is not None:
                    return self._again(same_request(earlier, request))
            if self.busy:
                raise LaunchError("a run is under way: wait for it or stop it first")
            launch_id = new_run_id()
            kept = await claim_launch(store, launch_id, key, request)
            if kept.id != launch_id:  # another process claimed the key meanwhile, same request
                return self._again(kept)
            return Launched(launch_id, self.start(request, title, launch_id))

    def _again(self, earlier: StoredLaunch) -> Launched:
        """An earlier launch, for a repeated request: this process's job for it, if it ran
        here (another process's is followed in the store, by its id)."""
        return Launched(earlier.id, self.jobs.get(earlier.id), repeated=True)

    def start(self, request: Request, title: str, launch_id: str | None = None) -> Job:
        if self.busy:
            raise LaunchError("a run is under way: wait for it or stop it first")
        commands = ([request.point_argv()] if request.save_point else []) + [request.argv()]
        job = Job(launch_id or new_run_id(), title, commands, dt.datetime.now(dt.UTC),
                  model=request.model)
        if self.artifacts is not None:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            last = job.commands[-1]
            last.insert(1, f"--artifact={self.artifacts / f'{job.id}.json'}")
        self.jobs[job.id] = job
        self.latest = job
        job.task = asyncio.create_task(self._run(job))
        return job

    async def _run(self, job: Job) -> None:
        # The selection is the form's: EVAL_CASES, EVAL_GROUPS or EVAL_REPEAT in the
        # workspace's own environment would change the run behind the review's back. (The
        # models it was started with, EVAL_MODEL and the like, stay.)
        env = {k: v for k, v in self.env.items() if k not in SELECTION_ENV}
        env.update(EVAL_LAUNCH=job.id, PYTHONUNBUFFERED="1")
        if job.model:
            env["EVAL_MODEL"] = job.model
        try:
            for argv in job.commands:
                if job.stopping:
                    break
                job.output.append("$ python -m evals " + " ".join(argv))
                job.process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "evals", *argv, cwd=ROOT, env=env,
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.STDOUT)
                assert job.process.stdout is not None
                async for raw in job.process.stdout:
                    job.output.append(raw.decode("utf-8", "replace").rstrip())
                code = await job.process.wait()
                if code != 0:
                    job.returncode = code
                    return
            job.returncode = 0
        except OSError as exc:
            job.output.append(f"could not start: {exc}")
            job.returncode = 2
        finally:
            if job.returncode is None:
                job.returncode = 1

    def stop(self, job_id: str) -> None:
        """Stop as Ctrl-C does: no new model call, what finished is kept (resumable)."""
        job = self.jobs.get(job_id)
        if job is None or not job.running:
            raise LaunchError("no such run under way")
        job.stopping = True
        if job.process is not None and job.process.returncode is None:
            job.process.send_signal(signal.SIGINT)

    async def close(self) -> None:
        """Stop what runs when the workspace stops; give it the run's grace to store."""
        job = self.latest
        if job is None or not job.running:
            return
        self.stop(job.id)
        if job.task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(job.task), 20)
            except TimeoutError:
                if job.process is not None and job.process.returncode is None:
                    job.process.kill()
