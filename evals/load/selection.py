"""What a run runs: the selected cases, then the selected scenarios' conversations.

`--cases` / EVAL_CASES names case files, case ids, scenario files and scenario ids alike; a
name that is none of these is an error. `--cases-only` and `--scenarios-only` leave one kind
out; scenarios run in the calm style (quick) unless `--full` asks for every style.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from evals.load.cases import Case, CaseFileError, load_cases
from evals.load.conversations import Conversation, conversations
from evals.load.items import EvalItem
from evals.load.scenarios import load_scenarios
from evals.record.fingerprint import Selection

Named = TypeVar("Named", Case, Conversation, EvalItem)


class UnknownNames(CaseFileError):
    """A selection names what is no case or scenario file or id (`names`): a typo, or an item
    deleted or renamed since the selection was saved (a comparison point's)."""

    def __init__(self, names: list[str], files: list[str]) -> None:
        super().__init__([f"EVAL_CASES: unknown {', '.join(repr(n) for n in names)}."
                          f" Case and scenario files: {', '.join(files)}"])
        self.names = names


def select_items(selection: Selection) -> list[EvalItem]:
    """The run's items in order: cases first, then scenario conversations."""
    source = Path(selection.file) if selection.file else None
    with_cases = selection.only != "scenarios"
    with_scenarios = selection.only != "cases" and source is None
    cases = (load_cases(source) if source else load_cases()) if with_cases else []
    # The cases already loaded are what a scenario's id may not be (no second load of them).
    ids = {c.id: c.where for c in cases} if with_cases and source is None else None
    scenarios, shared = load_scenarios(case_ids=ids) if with_scenarios else ([], [])
    case_files = {Path(c.file).stem for c in cases}
    scenario_files = {Path(s.file).stem for s in scenarios}
    clash = sorted(case_files & scenario_files)
    if clash:
        raise CaseFileError([f"{name}.yaml is both a case file and a scenario file: rename one"
                             " (EVAL_CASES names a file by its name)" for name in clash])
    items: list[EvalItem] = [*cases, *conversations(scenarios, shared, full=selection.full)]
    if selection.names:
        names = set(selection.names)
        files = case_files | scenario_files
        unknown = sorted(names - files - {c.id for c in cases} - {s.id for s in scenarios})
        if unknown:
            raise UnknownNames(unknown, sorted(files))
        items = [i for i in items if names.intersection(i.names) or Path(i.file).stem in names]
    return select_groups(items, selection.groups)


def item_files() -> list[str]:
    """The names (without .yaml) of every case file and scenario file: what the gate's hard
    files and a selection may name."""
    return sorted({Path(c.file).stem for c in load_cases()}
                  | {Path(s.file).stem for s in load_scenarios()[0]})


def select_groups(items: list[Named], groups: Sequence[str]) -> list[Named]:
    """EVAL_GROUPS / --group: the items of these groups."""
    if not groups:
        return items
    known = {i.group for i in items if i.group}
    unknown = [n for n in groups if n not in known]
    if unknown:
        raise CaseFileError([f"--group: unknown {', '.join(repr(n) for n in unknown)}. Groups:"
                             f" {', '.join(sorted(known)) or 'none (add group: to a case)'}"])
    return [i for i in items if i.group in groups]


def select_cases(cases: list[Case], selection: Selection) -> list[Case]:
    """The cases a selection names (an endpoint run, which takes no scenario)."""
    if selection.names:
        files = {Path(c.file).stem for c in cases}
        ids = {c.id for c in cases}
        unknown = [n for n in selection.names if n not in files and n not in ids]
        if unknown:
            raise CaseFileError([
                f"EVAL_CASES: unknown {', '.join(repr(n) for n in unknown)}. Files: "
                f"{', '.join(sorted(files))}. Case ids: {', '.join(sorted(ids))}"])
        names = set(selection.names)
        cases = [c for c in cases if c.id in names or Path(c.file).stem in names]
    return select_groups(cases, selection.groups)


def has_conversations(items: Sequence[EvalItem]) -> bool:
    """Some item is a conversation with the simulated visitor (more than one exchange)."""
    return any(not i.single_turn for i in items)
