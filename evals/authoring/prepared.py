"""The file `python -m evals prepare` writes, and what it reads back so that a scenario a person
has edited is never prepared again.

Each prepared scenario has a marker line above it:

    # prepared: issue_reports/goal 3f2a9c1b0d4e

its capability and kind, and a hash of the scenario as drafted (its data, not its layout or
comments). Editing the scenario changes its hash, so the marker no longer matches:

* prepare refuses to write over a file holding a scenario whose marker does not match, or that
  has none (a person wrote or changed it), and names each; a file of untouched drafts it
  writes again;
* a kind whose marker is in `evals/scenarios/` (a person moved the scenario there) is not
  prepared again, edited or not: the suite's scenario is theirs now.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evals.load.scenarios import SHARED_CRITERIA
from evals.load.yamlfile import read_list

MARKER = re.compile(r"^# prepared: (?P<kind>[a-z0-9_]+/\S+) (?P<hash>[0-9a-f]{12})\s*$")


def content_hash(scenario: dict[str, Any]) -> str:
    """The hash of a scenario's data as YAML reads it back (key order and layout aside)."""
    body = json.dumps(scenario, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()[:12]


def marker(kind: str, scenario: dict[str, Any]) -> str:
    return f"# prepared: {kind} {content_hash(scenario)}"


@dataclass(frozen=True)
class Suite:
    """What evals/scenarios/ already holds: each scenario id, and each prepared kind's marker
    (id or kind -> where)."""

    ids: dict[str, str]
    kinds: dict[str, str]


def read_suite(directory: Path) -> Suite:
    """The scenario ids and prepared markers of a scenario folder. A file that does not load
    still gives what it can: its errors are the scenario loader's to report."""
    ids: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        if path.name == SHARED_CRITERIA:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                 .splitlines(), start=1):
            found = MARKER.match(line)
            if found:
                kinds.setdefault(found["kind"], f"{path.name}:{n}")
        data, lines, _ = read_list(path, "a list of scenarios")
        for i, entry in enumerate(data):
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                ids.setdefault(entry["id"], f"{path.name}:{lines.get((i,), 1)}")
    return Suite(ids, kinds)


def edited(path: Path) -> list[str]:
    """Why prepare may not write over `path`: each scenario in it a person wrote or edited
    (no marker above it, or one whose hash no longer matches), as `file:line: message`; or
    the file's own errors. Nothing: a file of untouched drafts, or none at all."""
    if not path.exists():
        return []
    data, lines, problems = read_list(path, "not a list of scenarios")
    if problems:
        return [f"{p} (prepare writes over a file only when it can tell nothing in it was"
                " edited)" for p in problems]
    text = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, entry in enumerate(data):
        line = lines.get((i,), 1)
        above = next((t for t in reversed(text[:line - 1]) if t.strip()), "")
        found = MARKER.match(above)
        name = entry.get("id") if isinstance(entry, dict) else None
        if found is None:
            out.append(f"{path.name}:{line}: {name!r} has no '# prepared:' line: a person"
                       " wrote it")
        elif not isinstance(entry, dict) or content_hash(entry) != found["hash"]:
            out.append(f"{path.name}:{line}: {name!r} was edited since it was prepared")
    return out


@dataclass(frozen=True)
class Written:
    kind: str  # capability/kind
    where: str  # the audience and page it was drafted for
    scenario: dict[str, Any]


def render(scenarios: list[Written], rejected: list[dict[str, Any]], missing: list[str],
           in_suite: dict[str, str], unoffered: dict[str, str], model: str, when: str) -> str:
    """The scenarios as a scenario file, each under its marker; then, as comments, the kinds
    the suite has, the capabilities no audience is offered, every rejected draft in full with
    the reason, and the kinds no valid draft covers."""
    head = (f"# Scenarios prepared by {model}, {when}, from what the assistant is told.\n"
            "# The visitors are invented. Review each, then move it to evals/scenarios/"
            " yourself:\n"
            "# prepare never writes there. The '# prepared:' line above a scenario names its\n"
            "# capability and kind and hashes it as drafted. Once you edit a scenario, prepare"
            " will\n"
            "# not write over this file; a kind whose scenario is in evals/scenarios/ with its"
            " line\n# is not prepared again.\n")
    body = "".join(
        f"\n# {w.where}\n{marker(w.kind, w.scenario)}\n"
        + yaml.safe_dump([w.scenario], allow_unicode=True, sort_keys=False, width=100)
        for w in scenarios)
    kept = "".join(f"\n#   - {kind} ({where})" for kind, where in in_suite.items())
    cannot = "".join(f"\n#   - {cap}: {why}" for cap, why in unoffered.items())
    dropped = "".join(
        f"\n#   - kind: {r['kind']}\n#     reason: {_comment(r['reason'])}\n"
        f"#     draft: {_comment(json.dumps(r['draft'], ensure_ascii=False))}"
        for r in rejected)  # in full: a rejected draft is never dropped
    return (head + (body or "\n[]\n")
            + f"\n# in the suite already, not prepared again: {len(in_suite)}{kept}\n"
            + (f"# not offered to any audience here: {len(unoffered)}{cannot}\n"
               if unoffered else "")
            + f"# rejected: {len(rejected)}{dropped}\n"
            + f"# missing: {', '.join(missing) or 'none'}\n")


def _comment(text: str) -> str:
    """One comment line: the text whole, its line breaks as spaces."""
    return " ".join(text.split())
