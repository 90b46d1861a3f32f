"""What the response editor offers to start a result from: the example results a tool's result
model declares, and the frozen responses other cases and scenarios give that tool, each checked
against the tool's contract today. A response recorded under another contract is listed as
"changed contract", and one that does not fit the result schema with its reason; neither is
offered as a valid start."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.capabilities import Tool
from evals.load.response_validation import result_errors
from evals.load.responses import Answers, ToolResponses

# Enough to choose from without burying the editor.
MAX_EXAMPLES = 24


@dataclass(frozen=True)
class Example:
    """One result to start from: where it comes from, the result, and why it is not offered
    (None: it fits the tool's contract today)."""

    source: str
    response: dict[str, Any]
    problem: str | None = None
    changed_contract: bool = False
    also: int = 0  # how many other places give the same result

    @property
    def offered(self) -> bool:
        return self.problem is None


def examples_for(tool: Tool, items: Iterable[tuple[str, Mapping[str, ToolResponses]]]
                 ) -> list[Example]:
    """The tool's declared examples, then the responses `items` (each a label, such as
    "scenario x (file.yaml:3)", and that item's frozen responses) give the tool: its default's
    and every branch's, in order. The same result given in several places is listed once."""
    found: list[Example] = []
    declared = tool.result.__name__ if tool.result else tool.name
    for n, response in enumerate(tool.examples(), start=1):
        found.append(_checked(tool, f"declared by {declared} (example {n})", response, None))
    for label, frozen in items:
        responses = frozen.get(tool.name)
        if responses is None:
            continue
        for unit, answers in _units(responses):
            for n, response in enumerate(answers.sequence, start=1):
                found.append(_checked(tool, f"{label}, {unit}response {n}", response,
                                      responses.contract))
    return _once(found)[:MAX_EXAMPLES]


def _units(responses: ToolResponses) -> list[tuple[str, Answers]]:
    units: list[tuple[str, Answers]] = [(f"branch {i + 1} ", b)
                                        for i, b in enumerate(responses.branches)]
    return ([("", responses)] if responses.answers() else []) + units


def _checked(tool: Tool, source: str, response: dict[str, Any], contract: str | None
             ) -> Example:
    if contract is not None and contract != tool.contract():
        return Example(source, response, f"changed contract: written for {contract}, the"
                       f" tool's is now {tool.contract()}; check it against today's result"
                       " schema before using it", changed_contract=True)
    problems = result_errors(tool, response)
    return Example(source, response, f"does not fit: {problems[0]}" if problems else None)


def _once(examples: list[Example]) -> list[Example]:
    """Each result once, where it first appears (or where it first fits), those offered first,
    each kind in the order found."""
    kept: dict[str, Example] = {}
    for example in examples:
        key = json.dumps(example.response, sort_keys=True, ensure_ascii=False)
        first = kept.get(key)
        if first is None:
            kept[key] = example
        else:
            better = example if example.offered and not first.offered else first
            kept[key] = replace(better, also=first.also + 1)
    return sorted(kept.values(), key=lambda x: not x.offered)
