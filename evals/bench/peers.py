"""This suite beside promptfoo and inspect_ai, each a whole process started fresh, against one
fake model server: `make bench-peers`.

    python -m evals.bench.peers [--peers .data/peers] [--rounds 3] [--cases 200]
        [--concurrency 50] [--latency-ms 200]

The fake model server (evals/bench/fake_model.py) runs in its own process and answers every
request after 200 ms with a reply that names the Form 4. Each tool runs items of one prompt and
one check that the reply contains "Form 4": this suite in endpoint mode on a case file of its
own (`python -m evals run FILE --endpoint …`, `contains_all`, no call cache), promptfoo
(`contains`, no cache, nothing written to its database) and inspect_ai (`includes`, through its
OpenAI-compatible provider). Each runs one item, and N items at concurrency C; this suite also
runs its shipped case `no-glowforge` alone, whose checks parse the answer with spaCy.

Every run is timed as a whole process (evals/bench/processes.py): wall from spawn to exit, CPU
of the process and every descendant (the embedded PostgreSQL a run of this suite starts and
stops included), peak RSS of its largest process. What each run wrote is read back after it:
a run whose items did not all pass is shown as such and left out of the figures. The tools
take turns, round after round (`--rounds`), after one warm-up run of each that is not counted;
each cell is the median (and range) of its rounds. The issue's targets are marked beside this
suite's rows, and each column says whether this suite is ahead of both.

promptfoo and inspect_ai are installed under `--peers` by `make bench-peers` (pinned there).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from evals.bench.fake_model import FakeModelProcess
from evals.bench.peers_table import (
    CONTAINS_ALL,
    CPU_TARGET_S,
    EXPECTED,
    INSPECT,
    PROMPTFOO,
    SUITE,
    TARGET_C,
    TARGET_N,
    WALL_TARGET_S,
    Measured,
    Outcome,
    Row,
    ahead,
    notes,
    table,
)
from evals.bench.processes import Timed, adopt_orphans, run_timed
from evals.record.artifact import ArtifactError, read_run
from evals.settings import PROJECT_ROOT

PROMPT = "Which machine should I use for job {i}?"
SHIPPED_CASE = "no-glowforge"
RUN_TIMEOUT_S = 300.0


# -- what each tool is given ------------------------------------------------------------------

def suite_cases(n: int) -> list[dict[str, Any]]:
    """This suite's case file: `n` cases, one prompt and one `contains_all` check each."""
    return [{"id": f"peers-{i}", "prompt": PROMPT.format(i=i),
             "assert": [{"kind": "contains_all", "value": [EXPECTED]}]} for i in range(n)]


def promptfoo_config(base: str, n: int) -> dict[str, Any]:
    """promptfoo's config: one prompt, the fake model as an OpenAI chat provider, `n` tests
    that each assert the reply contains EXPECTED."""
    return {"description": f"bench-peers, {n} item(s)",
            "prompts": [PROMPT.replace("{i}", "{{i}}")],
            "providers": [{"id": "openai:chat:fake",
                           "config": {"apiBaseUrl": base, "apiKey": "bench"}}],
            "tests": [{"vars": {"i": i}, "assert": [{"type": "contains", "value": EXPECTED}]}
                      for i in range(n)]}


# inspect_ai's task: `n` samples (given with -T n=N), generate, then `includes`.
INSPECT_TASK = f'''\
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def bench(n: int = 1) -> Task:
    return Task(dataset=[Sample(input={PROMPT!r}.format(i=i), target={EXPECTED!r})
                         for i in range(n)],
                solver=generate(), scorer=includes())
'''


Reader = Callable[[int, Path, int], Outcome]  # (exit code, the run's folder, N) -> Outcome


@dataclass(frozen=True)
class Job:
    """One row of the table: a tool's command for N items, and how to read its outcome."""

    tool: str
    check: str
    n: int
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    read: Reader

    def for_run(self, run_dir: Path) -> Job:
        """The command, with `{run}` replaced by this run's own folder."""
        return replace(self, argv=[a.replace("{run}", str(run_dir)) for a in self.argv],
                       env={k: v.replace("{run}", str(run_dir)) for k, v in self.env.items()})


def suite_job(n: int, cases: Path | str, base: str, concurrency: int, check: str,
              env: dict[str, str]) -> Job:
    """`python -m evals run` in endpoint mode on a case file (or `--cases` a shipped id when
    `cases` is a str), no call cache, its artifact in the run's folder."""
    selection = [str(cases)] if isinstance(cases, Path) else ["--cases", cases]
    own = {k: v for k, v in env.items() if not k.startswith("EVAL_")}  # none of the user's
    return Job(SUITE, check, n,
               [sys.executable, "-m", "evals", "run", *selection, "--endpoint", base,
                "--endpoint-model", "fake", "--concurrency", str(concurrency),
                "--artifact", "{run}/run.json"],
               {**own, "EVAL_CACHE": "off"}, PROJECT_ROOT, suite_outcome)


def promptfoo_job(n: int, peers: Path, config: Path, home: Path, concurrency: int,
                  env: dict[str, str]) -> Job:
    """`promptfoo eval` on `config`: no cache, nothing written to its database, its results
    as JSON in the run's folder (read back for the items passed)."""
    peers = peers.absolute()  # it runs in the config's folder
    return Job(PROMPTFOO, f"contains {EXPECTED}", n,
               [str(peers / "node_modules" / ".bin" / "promptfoo"), "eval", "-c", str(config),
                "--no-cache", "--no-write", "-j", str(concurrency), "--no-table",
                "-o", "{run}/results.json"],
               {**env, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
                "PROMPTFOO_CONFIG_DIR": str(home)}, config.parent, promptfoo_outcome)


def inspect_job(n: int, peers: Path, task: Path, base: str, concurrency: int,
                env: dict[str, str]) -> Job:
    """`inspect eval` of `task` (named from its folder: inspect refuses an absolute path)
    with N samples through the OpenAI-compatible provider `openai-api/bench` (`openai/…`
    would call the Responses API, which the fake lacks), its log in the run's folder."""
    peers = peers.absolute()  # it runs in the task's folder
    return Job(INSPECT, f"includes {EXPECTED}", n,
               [str(peers / "venv" / "bin" / "inspect"), "eval", task.name, "-T", f"n={n}",
                "--model", "openai-api/bench/fake", "--max-connections", str(concurrency),
                "--display", "none"],
               {**env, "BENCH_BASE_URL": base, "BENCH_API_KEY": "bench",
                "INSPECT_LOG_DIR": "{run}/logs"}, task.parent,
               partial(inspect_outcome, inspect=peers / "venv" / "bin" / "inspect"))


# -- what each run says of its items ------------------------------------------------------------

def _exit(code: int) -> str | None:
    return None if code == 0 else f"exit {code}"


def suite_outcome(code: int, run_dir: Path, n: int) -> Outcome:
    """From the run's artifact: its PASSes, and its other statuses if any."""
    try:
        record = read_run(run_dir / "run.json")
    except ArtifactError as exc:
        return Outcome(0, n, f"exit {code}: {exc}")
    passed = sum(c.status == "PASS" for c in record.cases)
    others = Counter(c.status for c in record.cases if c.status != "PASS")
    problems = [p for p in (_exit(code), f"{len(record.cases)} item(s) ran"
                            if len(record.cases) != n else None,
                            *(f"{k} {s}" for s, k in sorted(others.items()))) if p]
    return Outcome(passed, n, ", ".join(problems) or None)


def promptfoo_outcome(code: int, run_dir: Path, n: int) -> Outcome:
    """From promptfoo's results JSON: successes, failures and errors (exit 100 is its code
    for failed tests)."""
    try:
        stats = json.loads((run_dir / "results.json").read_text())["results"]["stats"]
        passed, failed, errors = (int(stats[k]) for k in ("successes", "failures", "errors"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Outcome(0, n, f"exit {code}, no results: {type(exc).__name__}: {exc}")
    problems = [p for p in (_exit(code), f"{failed} failed" if failed else None,
                            f"{errors} errors" if errors else None,
                            f"{passed + failed + errors} item(s) ran"
                            if passed + failed + errors != n else None) if p]
    return Outcome(passed, n, ", ".join(problems) or None)


def inspect_outcome(code: int, run_dir: Path, n: int, *, inspect: Path) -> Outcome:
    """From the eval log's header, dumped by inspect itself (its .eval file is compressed
    in a way Python 3.11's zipfile cannot read): the status, the samples completed and the
    share `includes` scored correct."""
    logs = sorted((run_dir / "logs").glob("*.eval"))
    if len(logs) != 1:
        return Outcome(0, n, f"exit {code}, {len(logs)} eval logs")
    try:
        dumped = subprocess.run([str(inspect), "log", "dump", "--header-only", str(logs[0])],
                                capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Outcome(0, n, f"exit {code}, its log not read: {exc}")
    if dumped.returncode != 0:
        return Outcome(0, n, f"exit {code}, its log not read: `inspect log dump` exit"
                             f" {dumped.returncode}")
    return inspect_header_outcome(code, dumped.stdout, n)


def inspect_header_outcome(code: int, header: str, n: int) -> Outcome:
    """The outcome in an inspect eval log's header (JSON text)."""
    try:
        log = json.loads(header)
        status, results = log["status"], log.get("results") or {}
        completed = int(results.get("completed_samples", 0))
        accuracy = (results.get("scores") or [{}])[0]["metrics"]["accuracy"]["value"]
        passed = round(float(accuracy) * completed)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return Outcome(0, n, f"exit {code}, unreadable log: {type(exc).__name__}: {exc}")
    problems = [p for p in (_exit(code), f"status {status}" if status != "success" else None,
                            f"{completed - passed} incorrect" if passed < completed else None,
                            f"{completed} sample(s) completed" if completed != n else None)
                if p]
    return Outcome(passed, n, ", ".join(problems) or None)


# -- measuring a run ----------------------------------------------------------------------------

def judged(got: Timed, outcome: Outcome, stderr: str) -> Outcome:
    """The run's outcome as the table shows it: killed for taking too long, or, when its
    items did not all pass, with the last lines of what it printed on stderr."""
    if got.timed_out:
        return Outcome(outcome.passed, outcome.expected,
                       f"killed after {RUN_TIMEOUT_S:.0f} s")
    if outcome.ok:
        return outcome
    tail = stderr.strip().splitlines()[-2:]
    return Outcome(outcome.passed, outcome.expected,
                   f"{outcome.problem}; stderr: {' | '.join(tail) or 'empty'}")


def run_once(job: Job, run_dir: Path, keep: set[int]) -> Measured:
    """Start `job` fresh in `run_dir`, time it, and read what it says of its items."""
    job = job.for_run(run_dir)
    got = run_timed(job.argv, job.env, job.cwd, run_dir, keep, RUN_TIMEOUT_S)
    outcome = job.read(got.code, run_dir, job.n)
    return Measured(got, judged(got, outcome,
                                (run_dir / "stderr").read_text(errors="replace")))


# -- the bench ----------------------------------------------------------------------------------

def _first_line(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except OSError as exc:
        return f"unknown ({exc.strerror})"
    return (done.stdout.strip() or done.stderr.strip()).splitlines()[0] if done.returncode == 0 \
        else f"unknown (exit {done.returncode})"


def versions(peers: Path) -> list[str]:
    """Each tool's version, and what runs it."""
    commit = _first_line(["git", "-C", str(PROJECT_ROOT), "rev-parse", "--short", "HEAD"])
    try:
        promptfoo = json.loads((peers / "node_modules" / "promptfoo" / "package.json")
                               .read_text())["version"]
    except (OSError, ValueError, KeyError) as exc:
        promptfoo = f"unknown ({exc})"
    inspect = _first_line([str(peers / "venv" / "bin" / "python"), "-c",
                           "import importlib.metadata as m, platform; print('inspect_ai',"
                           " m.version('inspect-ai'), '· openai', m.version('openai'),"
                           " '· Python', platform.python_version())"])
    return [f"{SUITE}: commit {commit} · Python {platform.python_version()}",
            f"{PROMPTFOO}: {promptfoo} · Node {_first_line(['node', '--version'])}",
            f"{INSPECT}: {inspect}"]


def missing(peers: Path) -> list[str]:
    """The peers' programs that are not installed under `peers`."""
    wanted = [peers / "node_modules" / ".bin" / "promptfoo", peers / "venv" / "bin" / "inspect"]
    return [str(p) for p in wanted if not os.access(p, os.X_OK)]


def jobs(work: Path, peers: Path, base: str, n: int, concurrency: int) -> list[Job]:
    """The rows, with what each tool is given written under `work`."""
    env = dict(os.environ)
    home = work / "promptfoo-home"
    home.mkdir()
    task = work / "inspect" / "task.py"
    task.parent.mkdir()
    task.write_text(INSPECT_TASK)
    suite, promptfoo, inspect = [], [], []
    for count in sorted({1, n}):
        cases = work / "suite" / f"peers-{count}.yaml"
        cases.parent.mkdir(exist_ok=True)
        cases.write_text(yaml.safe_dump(suite_cases(count), sort_keys=False))
        config = work / "promptfoo" / f"{count}" / "promptfooconfig.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(yaml.safe_dump(promptfoo_config(base, count), sort_keys=False))
        suite.append(suite_job(count, cases, base, concurrency, CONTAINS_ALL, env))
        if count == 1:
            suite.append(suite_job(1, SHIPPED_CASE, base, concurrency,
                                   f"{SHIPPED_CASE} (parses with spaCy)", env))
        promptfoo.append(promptfoo_job(count, peers, config, home, concurrency, env))
        inspect.append(inspect_job(count, peers, task, base, concurrency, env))
    return [*suite, *promptfoo, *inspect]  # the table's rows: tool by tool


def bench(peers: Path, rounds: int, n: int, concurrency: int, latency_s: float) -> list[str]:
    """Every row's runs, round-robin, against one fake model server: the lines to print."""
    adopted = adopt_orphans()
    with FakeModelProcess(latency_s) as server, \
            tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
        work = Path(tmp)
        todo = jobs(work, peers, server.base, n, concurrency)
        keep = {server.proc.pid} if server.proc else set()
        rows = [Row(j.tool, j.check, j.n, [], concurrency) for j in todo]
        load = [os.getloadavg()[0]]
        for index, job in enumerate(todo):  # warm-up: a first start reads files from disk
            if job.n == 1:
                warm = run_once(job, work / "runs" / "warm-up" / f"{index}", keep)
                print(f"warm-up {job.tool} {job.check}: {warm.timed.wall_s:.2f} s,"
                      f" {warm.outcome}", file=sys.stderr)
        for round_no in range(1, rounds + 1):
            order = list(range(len(todo)))
            order = order[round_no - 1:] + order[:round_no - 1]  # each round starts elsewhere
            for index in order:
                got = run_once(todo[index], work / "runs" / f"{round_no}" / f"{index}", keep)
                rows[index].runs.append(got)
                print(f"round {round_no}: {todo[index].tool} {todo[index].check}"
                      f" N={todo[index].n}: {got.timed.wall_s:.2f} s wall,"
                      f" {got.timed.cpu_s:.2f} s CPU, {got.outcome}", file=sys.stderr)
        load.append(os.getloadavg()[0])
    lines = [f"fake model: {latency_s * 1000:.0f} ms a call, its own process · concurrency"
             f" {concurrency} · {rounds} round(s), round-robin, after a warm-up run of each ·"
             f" each a whole process started fresh · median (range) of the rounds whose items"
             f" all passed",
             f"machine: {os.cpu_count()} cores · load average {load[0]:.2f} at the start,"
             f" {load[1]:.2f} at the end",
             *versions(peers), "", *table(rows), "",
             f"the issue's targets for this suite: one case in endpoint mode ≤ {WALL_TARGET_S} s"
             f" wall; N={TARGET_N} at C={TARGET_C} ≤ {CPU_TARGET_S} s CPU (medians)",
             "ahead of promptfoo and inspect_ai on every column (medians, the literal check):",
             *(f"  {line}" for line in ahead(rows)), *notes(rows)]
    if not adopted:
        lines.append("note: processes a run left running could not be adopted here (not"
                     " Linux): their CPU is not counted")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evals.bench.peers",
                                description="This suite, promptfoo and inspect_ai side by"
                                            " side, as whole processes against a fake model.")
    p.add_argument("--peers", type=Path, default=PROJECT_ROOT / ".data" / "peers",
                   help="where make bench-peers installed promptfoo (node_modules/) and"
                        " inspect_ai (venv/)")
    p.add_argument("--rounds", type=int, default=3,
                   help="runs of each row, taking turns (the machine's noise: median, range)")
    p.add_argument("--cases", type=int, default=TARGET_N, help="N, the larger run's items")
    p.add_argument("--concurrency", type=int, default=TARGET_C, help="items in flight")
    p.add_argument("--latency-ms", type=float, default=200, help="the fake model's time a call")
    args = p.parse_args(argv)
    for flag in ("rounds", "cases", "concurrency"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag} must be 1 or more, not {getattr(args, flag)}")
    absent = missing(args.peers)
    if absent:
        print(f"error: not installed: {', '.join(absent)}; `make bench-peers` installs"
              " promptfoo and inspect_ai there", file=sys.stderr)
        return 2
    print("\n".join(bench(args.peers, args.rounds, args.cases, args.concurrency,
                          args.latency_ms / 1000)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
