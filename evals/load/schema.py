"""The JSON Schemas of the case and scenario files (evals/schemas/), generated from the models
that validate them, and the line at the top of each file that names its schema for an editor:

    # yaml-language-server: $schema=../schemas/case-file.schema.json

A file is a list of items (`Case`, `Scenario`; the shared criteria's `SharedCriterion`), whose
first entry may be the file's defaults (`Limits`). An `assert:` entry is one of the kinds the
check registry lets a file name, each with its own argument model (`AssertionSpec`'s schema).
What the loaders check across entries, files and the fixtures (a toolId in the catalogue, a
photo on disk, a unique id, a tool offered on the page, the defaults only first) stays theirs: a
file the schema accepts may still be refused when it loads, with its `file:line`. The other way,
the schema asks for a value's own type where the loader would convert one (`max_turns: "5"`);
every shipped file is valid against its schema (a test).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.json_schema import models_json_schema

from evals.load.cases import Case
from evals.load.limits import DEFAULTS, Limits
from evals.load.scenarios import SHARED_CRITERIA, Scenario, SharedCriterion
from evals.record.schema import Published
from evals.settings import CASES_DIR, SCENARIOS_DIR

# The first line of a file that names its schema (yaml-language-server's modeline).
SCHEMA_LINE = re.compile(r"#\s*yaml-language-server:\s*\$schema=")


class DefaultsEntry(BaseModel):
    """A file's first entry may be its defaults: the limits of every item of the file (an
    item's own value wins; evals/load/limits.py)."""

    model_config = ConfigDict(extra="forbid", title=DEFAULTS)
    defaults: Limits


def _list_file(item: type[BaseModel]) -> dict[str, Any]:
    """A file that is a list of `item`s, whose first entry may be the file's defaults. Any
    entry may be either here: that only the first may be the defaults is the loader's to say.
    `prefixItems` would say it, but an editor that reads JSON Schema draft 7 only
    (yaml-language-server before 1.20) ignores it and would hold the defaults entry to be an
    item, marking it wrong in every shipped file that has one."""
    refs, defs = models_json_schema([(item, "validation"), (DefaultsEntry, "validation")])
    return {"type": "array",
            "items": {"anyOf": [refs[(item, "validation")], refs[(DefaultsEntry, "validation")]]},
            **defs}


CASE_FILE = Published(
    "case-file", "Case file",
    "A file of evals/cases/: a list of cases (Case in evals/load/cases.py), the first entry"
    " possibly the file's defaults. docs/cases-and-checks.md describes every key.",
    lambda: _list_file(Case))
SCENARIO_FILE = Published(
    "scenario-file", "Scenario file",
    "A file of evals/scenarios/ (all but criteria.yaml): a list of scenarios (Scenario in"
    " evals/load/scenarios.py), the first entry possibly the file's defaults. docs/scenarios.md"
    " describes every key.",
    lambda: _list_file(Scenario))
CRITERIA_FILE = Published(
    "criteria-file", "Shared criteria file",
    f"evals/scenarios/{SHARED_CRITERIA}: criteria shared by scenarios, each applying to every"
    " scenario or to the ones it lists (SharedCriterion in evals/load/scenarios.py).",
    lambda: TypeAdapter(list[SharedCriterion]).json_schema())
FILE_SCHEMAS = (CASE_FILE, SCENARIO_FILE, CRITERIA_FILE)


def file_schema(path: Path) -> Published:
    """The schema of a case or scenario file, by the folder it is in and its name."""
    if path.parent.name == CASES_DIR.name:
        return CASE_FILE
    return CRITERIA_FILE if path.name == SHARED_CRITERIA else SCENARIO_FILE


def item_files(cases: Path = CASES_DIR, scenarios: Path = SCENARIOS_DIR) -> list[Path]:
    """Every case and scenario file (each folder's *.yaml), the cases' first."""
    return sorted(cases.glob("*.yaml")) + sorted(scenarios.glob("*.yaml"))


def schema_line(path: Path) -> str:
    """The line that names a file's schema, by a path relative to the file
    (`../schemas/case-file.schema.json`)."""
    where = Path(os.path.relpath(file_schema(path).path, path.parent))
    return f"# yaml-language-server: $schema={where.as_posix()}"


def names_schema(text: str, line: str) -> bool:
    """Whether a file's text starts with this schema line."""
    return text.partition("\n")[0].rstrip("\r") == line


def with_schema_line(text: str, line: str) -> str:
    """The file's text starting with `line`: in place of a schema line already there (naming
    another), else above everything; its line endings kept."""
    if names_schema(text, line):
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    first, _, rest = text.partition("\n")
    return line + newline + (rest if SCHEMA_LINE.match(first) else text)
