"""`make bench-reuse`: what the call cache saves, on the real suite and the model a run would
use (the embedded one by default, temperature 0). Each step is a real `python -m evals`
command in a child process, timed whole (the model server's start included); its figures are
read back from the run store.

(a) a cold run: every call made (`--cache refresh`, so whatever the cache holds is not used)
(b) the same again, nothing changed: every call replayed; its statuses must equal (a)'s
(c) after changing one staff-only capability fragment (appended in the child, never in a file)
(d) `compare` of a point taken from (b), under that change
(e) `--repeat 5` against `--repeat auto:5` on a few cases: calls and decisions side by side

    python -m evals.bench.reuse [--cases SPEC] [--repeat-cases SPEC] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import runpy
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from app.capabilities import REGISTRY
from app.settings import PROJECT_ROOT, get_settings
from evals.record.repetitions import fixed_decision
from evals.record.results import counted_status
from evals.record.run import RunRecord
from evals.record.store import RunStore
from evals.report.repeat_rule import replay
from evals.settings import conninfo

# A staff-only capability, and what the change appends to its fragment.
CHANGED = "maintenance"
APPENDED = "When you list tickets, give each ticket's number before its title."
REPEAT_CASES = "no-glowforge,where-is-the-lab,unit-status-calls-tool,staff-lists-open-tickets"


@dataclass
class Step:
    name: str
    command: str
    wall_s: float
    exit: int
    runs: list[str]
    items: int
    made: int
    replayed: int
    generated: int  # the chat model's completion tokens spent by this step
    statuses: dict[str, str]


def child(argv: list[str]) -> int:
    """In a child process: apply the change if asked, then run `python -m evals` there."""
    if argv[:1] == ["--change"]:
        cap = REGISTRY.capabilities[CHANGED]
        original = cap.prompt

        def prompt(ctx: Any) -> str:
            return original(ctx) + "\n" + APPENDED

        REGISTRY.capabilities[CHANGED] = replace(cap, prompt=prompt)
        argv = argv[1:]
    # `python -m evals ARGV` in this process, as a person would type it (the bench drives the
    # command line; it does not import it).
    sys.argv = ["python -m evals", *argv]
    try:
        runpy.run_module("evals", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


async def _runs(settings: Any, ids: set[str] | None = None) -> tuple[set[str], list[RunRecord]]:
    async with RunStore.open(conninfo(settings)) as store:
        listed = {r.id for r in await store.list_runs(1000)}
        records = [await store.load_run(i) for i in sorted(ids or set())]
    return listed, records


def _figures(records: list[RunRecord]) -> tuple[int, int, int, int, dict[str, str]]:
    made = replayed = generated = items = 0
    statuses: dict[str, str] = {}
    for record in records:
        for r in record.cases:
            items += 1
            statuses[f"{record.settings.version or 'run'}:{r.id}#{r.repetition}"] = r.status
            for a in r.attempts:
                made += a.calls.made
                replayed += a.calls.replayed
                generated += a.usage.completion_tokens
    return items, made, replayed, generated, statuses


def step(name: str, argv: list[str], *, change: bool = False) -> Step:
    settings = get_settings()
    before, _ = asyncio.run(_runs(settings))
    command = [sys.executable, "-m", "evals.bench.reuse", "--child",
               *(["--change"] if change else []), *argv]
    shown = "python -m evals " + " ".join(argv) + (f" (with {CHANGED} changed)" if change
                                                   else "")
    print(f"\n== {name}: {shown}", flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT_ROOT, check=False)
    wall = time.perf_counter() - started
    after, _ = asyncio.run(_runs(settings))
    _, records = asyncio.run(_runs(settings, after - before))
    items, made, replayed, generated, statuses = _figures(records)
    result = Step(name, shown, round(wall, 1), done.returncode,
                  sorted(r.run_id or "" for r in records), items, made, replayed, generated,
                  statuses)
    print(f"== {name}: {wall:.1f} s wall · exit {done.returncode} · {items} item(s) ·"
          f" {made} model calls made, {replayed} replayed · {generated} tokens generated",
          flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    p = argparse.ArgumentParser(prog="python -m evals.bench.reuse", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", help="the selection of (a)-(d) (default: the whole suite)")
    p.add_argument("--repeat-cases", default=REPEAT_CASES, help="the cases of (e)")
    p.add_argument("--out", type=Path, default=PROJECT_ROOT / "evals" / ".bench-reuse.json")
    args = p.parse_args(argv)
    selection = ["--cases", args.cases] if args.cases else []
    data = PROJECT_ROOT / "evals"
    tag = dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
    steps: list[Step] = []

    def keep() -> None:  # what is measured so far, after every step
        args.out.write_text(json.dumps([asdict(s) for s in steps], indent=2) + "\n")

    def run(name: str, more: list[str], change: bool = False) -> Step:
        chosen = [] if "--cases" in more else selection
        steps.append(step(name, ["run", *chosen, *more, "--artifact",
                                 str(data / f".bench-{name.split()[0]}.json")], change=change))
        keep()
        return steps[-1]

    cold = run("a cold", ["--cache", "refresh"])
    again = run("b no change", [])
    same = sum(cold.statuses.get(k) == v for k, v in again.statuses.items())
    print(f"(b) statuses equal to (a)'s: {same} of {len(again.statuses)}"
          + ("" if same == len(again.statuses) == len(cold.statuses) else
             "  <-- A VERDICT CHANGED"))
    point = f"bench-reuse-{tag}"
    subprocess.run([sys.executable, "-m", "evals", "point", "save", point, "--from-run",
                    again.runs[0]], cwd=PROJECT_ROOT, check=False)
    changed = run("c one staff fragment changed", [], change=True)
    steps.append(step("d compare", ["compare", point], change=True))
    keep()
    fixed = run("e1 repeat 5", ["--cases", args.repeat_cases, "--repeat", "5"])
    auto = run("e2 repeat auto:5", ["--cases", args.repeat_cases, "--repeat", "auto:5"])
    _, [fixed_record] = asyncio.run(_runs(get_settings(), set(fixed.runs)))
    _, [auto_record] = asyncio.run(_runs(get_settings(), set(auto.runs)))
    print_table(steps)
    print(f"\n(c) {changed.made} calls made against (a)'s {cold.made}:"
          f" {changed.wall_s / cold.wall_s:.0%} of its wall")
    print(f"(d) compare: {steps[3].wall_s:.1f} s, {steps[3].wall_s / changed.wall_s:.2f}× the"
          " wall of (c)")
    print_decisions(fixed_record, auto_record)
    # (e2) asks for the same samples as (e1)'s first ones (the same keys): what it replays is
    # what it would make on its own.
    print(f"(e) calls: repeat 5 {fixed.made + fixed.replayed} ({fixed.made} made now),"
          f" auto:5 {auto.made + auto.replayed} ({auto.replayed} of them replayed from (e1))")
    print(f"\nfigures: {args.out}")
    return 0


def print_table(steps: list[Step]) -> None:
    print("\n| step | wall s | items | calls made | calls replayed | tokens generated | exit |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for s in steps:
        print(f"| {s.name} | {s.wall_s} | {s.items} | {s.made} | {s.replayed} |"
              f" {s.generated} | {s.exit} |")


def print_decisions(fixed: RunRecord, auto: RunRecord) -> None:
    """(e): per case, the fixed-5 verdict and samples against the auto run's."""
    simulated = {c.id: c for c in replay(fixed, max_repeat=5).cases}
    by_case: dict[str, list[str]] = {}
    for r in sorted(auto.cases, key=lambda r: r.repetition):
        by_case.setdefault(r.id, []).append(counted_status(r))  # as the runner decided
    rule = auto.plan.repeat_rule if auto.plan else None
    print("\n| case | fixed 5: statuses | fixed verdict | auto:5 samples | auto verdict |"
          " replayed on the fixed run |")
    print("| --- | --- | --- | --- | --- | --- |")
    for cid, c in simulated.items():
        ran = by_case.get(cid, [])
        verdict = rule.replay(tuple(ran)).decision if rule is not None and ran else "?"
        print(f"| {cid} | {' '.join(c.statuses)} | {fixed_decision(c.statuses)} | {len(ran)} |"
              f" {verdict} | {c.auto}, {c.used} samples |")
    print(f"samples: fixed {sum(len(c.statuses) for c in simulated.values())},"
          f" auto {sum(len(v) for v in by_case.values())}")


if __name__ == "__main__":
    os.environ.setdefault("EVAL_CACHE", "reuse")
    raise SystemExit(main())
