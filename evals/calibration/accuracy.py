"""The checks measured against labelled answers: `python -m evals accuracy`.

Each item of tests/evals/labelled/*.yaml is an answer (with its tool calls, attached manuals
and citation evidence where the kind needs them), one assertion, and the verdict a careful
reader gives from the README's meaning of that kind, written before the check was run on it.
A disagreement is a bug in the check or in its documentation, never a reason to relabel.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from app.manuals.citations import DocumentEvidence
from evals.checks import authored
from evals.fixtures.catalog import fixtures_for
from evals.fixtures.lab_catalog import Catalog
from evals.load.cases import CaseFileError
from evals.load.yamlfile import line_of, read_list
from evals.record.transcript import AttachedManual, CallOutcome, ToolCall, Transcript, Turn
from evals.settings import PROJECT_ROOT

LABELLED_DIR = PROJECT_ROOT / "tests" / "evals" / "labelled"


class _Call(BaseModel):
    """A tool call as a labelled item writes it (outcome ok unless it says otherwise)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    arguments: JsonValue = {}
    result: JsonValue = {}
    kind: Literal["read", "write", "action", "live_read", "confirm"] | None = None
    outcome: CallOutcome = "ok"


class LabelledItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str
    check: dict[str, Any]
    catalog: Catalog = "demo"
    calls: list[_Call] = []
    # The visitor's own messages in this conversation, oldest first (the checks that ask what
    # the visitor asked for or gave read them).
    visitor: list[str] = []
    attached: list[AttachedManual] = []
    evidence: dict[str, DocumentEvidence] = {}
    verdict: Literal["pass", "fail"]
    adversarial: bool
    why: str


@dataclass(frozen=True)
class Outcome:
    where: str
    kind: str
    expected: str
    got: str
    reason: str
    adversarial: bool
    answer: str

    @property
    def agrees(self) -> bool:
        return self.expected == self.got


def _run(item: LabelledItem) -> tuple[str, str]:
    spec = authored()[item.check["kind"]]
    args = spec.args.model_validate({k: v for k, v in item.check.items() if k != "kind"})
    turn = Transcript(answer=item.answer,
                      tool_calls=[ToolCall.model_validate(c.model_dump()) for c in item.calls],
                      attached_manuals=item.attached, evidence=item.evidence,
                      turns=[*(Turn(role="user", content=m) for m in item.visitor),
                             Turn(role="assistant", content=item.answer)])
    assert spec.check is not None
    passed, reason = spec.check(turn, args, fixtures_for(item.catalog))
    return ("pass" if passed else "fail"), reason


def load_items(directory: Path = LABELLED_DIR) -> list[tuple[str, LabelledItem]]:
    """Every labelled item with its file:line; all errors raised together."""
    files = sorted(directory.glob("*.yaml")) if directory.is_dir() else [directory]
    if not files or not files[0].exists():
        raise CaseFileError([f"{directory}: no labelled *.yaml files"])
    items: list[tuple[str, LabelledItem]] = []
    errors: list[str] = []
    for path in files:
        data, lines, problems = read_list(path, "a labelled file is a list of items")
        if problems:
            errors += problems
            continue
        for i, raw in enumerate(data):
            where = f"{path.name}:{line_of((i,), lines)}"
            try:
                item = LabelledItem.model_validate(raw)
                kind = item.check.get("kind")
                if kind not in authored():
                    raise ValueError(f"unknown assertion kind {kind!r}")
                authored()[kind].args.model_validate(
                    {k: v for k, v in item.check.items() if k != "kind"})
            except (ValidationError, ValueError) as exc:
                first = str(exc).splitlines()
                errors.append(f"{where}: {' '.join(first[:3])}")
                continue
            items.append((where, item))
    if errors:
        raise CaseFileError(errors)
    return items


def measure(items: list[tuple[str, LabelledItem]]) -> list[Outcome]:
    out = []
    for where, item in items:
        try:
            got, reason = _run(item)
        except Exception as exc:  # a check that raises disagrees with every label
            got, reason = "error", f"the check raised {type(exc).__name__}: {exc}"
        out.append(Outcome(where, item.check["kind"], item.verdict, got, reason,
                           item.adversarial, item.answer))
    return out


def report(outcomes: list[Outcome], out: TextIO) -> float:
    """Agreement per kind and overall, then every disagreement; returns overall agreement."""
    by_kind: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_kind[o.kind].append(o)
    print(f"{'kind':<22} {'items':>5} {'adversarial':>11} {'agree':>6}", file=out)
    for kind in sorted(by_kind):
        group = by_kind[kind]
        agree = sum(o.agrees for o in group)
        print(f"{kind:<22} {len(group):>5} {sum(o.adversarial for o in group):>11}"
              f" {agree / len(group):>6.1%}", file=out)
    total = len(outcomes)
    agreement = sum(o.agrees for o in outcomes) / total if total else 0.0
    print(f"{'all':<22} {total:>5} {sum(o.adversarial for o in outcomes):>11}"
          f" {agreement:>6.1%}", file=out)
    missing = sorted(set(authored()) - set(by_kind))
    if missing:
        print(f"kinds with no labelled item: {', '.join(missing)}", file=out)
    for o in outcomes:
        if not o.agrees:
            answer = " ".join(o.answer.split())
            print(f"\n≠ {o.where} {o.kind}: labelled {o.expected}, check says {o.got}"
                  f"\n    {o.reason}\n    answer: “{answer[:300]}”", file=out)
    return agreement
