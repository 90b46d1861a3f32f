"""What a run runs: the selected cases, then the selected scenarios' conversations.

`--cases` / EVAL_CASES names case files, case ids, scenario files and scenario ids alike; a
name that is none of these is an error. `--cases-only` and `--scenarios-only` leave one kind
out; scenarios run in the calm style (quick) unless `--full` asks for every style.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.execute.conversation import ScenarioItem, scenario_items
from evals.load.cases import CaseFileError, load_cases, named, select_groups
from evals.load.scenarios import load_scenarios


def select_items(args: argparse.Namespace) -> list[Any]:
    """The run's items in order: cases first, then scenario conversations."""
    source = getattr(args, "case_file", None)
    with_cases = not getattr(args, "scenarios_only", False)
    with_scenarios = not getattr(args, "cases_only", False) and source is None
    cases = (load_cases(source) if source else load_cases()) if with_cases else []
    scenarios, shared = load_scenarios() if with_scenarios else ([], [])
    case_files = {Path(c.file).stem for c in cases}
    scenario_files = {Path(s.file).stem for s in scenarios}
    clash = sorted(case_files & scenario_files)
    if clash:
        raise CaseFileError([f"{name}.yaml is both a case file and a scenario file: rename one"
                             " (EVAL_CASES names a file by its name)" for name in clash])
    spec = args.cases
    if spec and spec.strip():
        names = {n.strip() for n in spec.split(",") if n.strip()}
        files = case_files | scenario_files
        unknown = sorted(names - files - {c.id for c in cases} - {s.id for s in scenarios})
        if unknown:
            raise CaseFileError([f"EVAL_CASES: unknown {', '.join(repr(n) for n in unknown)}."
                                 f" Case and scenario files: {', '.join(sorted(files))}"])
        cases, scenarios = named(cases, names), named(scenarios, names)
    items: list[Any] = [*cases, *scenario_items(scenarios, shared,
                                                full=bool(getattr(args, "full", False)),
                                                visitor_model=None)]
    return select_groups(items, args.group)


def with_visitor(items: list[Any], visitor: Any) -> list[Any]:
    return [replace(i, visitor_model=visitor) if isinstance(i, ScenarioItem) else i
            for i in items]


def has_scenarios(items: list[Any]) -> bool:
    return any(isinstance(i, ScenarioItem) for i in items)
