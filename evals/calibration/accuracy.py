"""The checks measured against labelled answers: `python -m evals accuracy`.

Each item of tests/evals/labelled/*.yaml is an answer (with its tool calls, attached manuals
and citation evidence where the kind needs them), one assertion, and the verdict a careful
reader gives from the README's meaning of that kind, written before the check was run on it.
A disagreement is a bug in the check or in its documentation, never a reason to relabel.

Three kinds of set, reported apart: the **tuned** corpus (tests/evals/labelled/*.yaml: the
checks were mended on its disagreements, so it says only that they still do what they were
mended to do), the **held-out** sets (tests/evals/labelled/heldout/*.yaml: written blind, by
someone who had seen neither the checks nor the corpus, and never tuned on: the honest figure),
and the **seen** sets (tests/evals/labelled/seen/*.yaml: held-out sets whose disagreements
were read and mended on since, not yet brought to full agreement; no longer an honest figure,
and not held to the tuned corpus's 100%). A
check may decide (pass or fail) or abstain (undecided, with the reason); each set is reported
per kind and per language with its agreement on decided verdicts, the share undecided (its
coverage is the rest) and its false passes (the check passed what a reader fails: the worst
error a check can make). An item a careful reader could not decide is labelled `unclear` and
counted apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from app.manuals.citations import DocumentEvidence
from evals.checks import authored
from evals.checks._language import LANGUAGES
from evals.fixtures.catalog import fixtures_for
from evals.fixtures.lab_catalog import Catalog
from evals.load.cases import CaseFileError
from evals.load.yamlfile import line_of, read_list
from evals.record.transcript import AttachedManual, CallOutcome, ToolCall, Transcript, Turn
from evals.settings import PROJECT_ROOT

LABELLED_DIR = PROJECT_ROOT / "tests" / "evals" / "labelled"
HELDOUT = "heldout"  # the sub-folder of sets never tuned on
SEEN = "seen"  # the sub-folder of held-out sets read and mended on since: no longer held out
SetKind = Literal["tuned", "seen", "held-out"]
_FOLDERS: dict[str, SetKind] = {SEEN: "seen", HELDOUT: "held-out"}


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
    verdict: Literal["pass", "fail", "unclear"]
    adversarial: bool
    why: str
    language: str = "en"  # the answer's language (ISO 639-1), as its writer wrote it


@dataclass(frozen=True)
class Outcome:
    where: str
    kind: str
    expected: str
    got: str  # pass, fail, undecided or error
    reason: str
    adversarial: bool
    answer: str
    language: str = "en"
    set: SetKind = "tuned"

    @property
    def agrees(self) -> bool:
        """The check decided as the reader did (an undecided check neither agrees nor
        disagrees; see `decided`)."""
        return self.expected == self.got

    @property
    def labelled(self) -> bool:
        return self.expected != "unclear"

    @property
    def decided(self) -> bool:
        return self.got in ("pass", "fail")

    @property
    def false_pass(self) -> bool:
        return self.expected == "fail" and self.got == "pass"

    @property
    def disagrees(self) -> bool:
        """A decided verdict (or an error) against a reader's label: a bug in the check or
        in its documentation."""
        return self.labelled and self.got != "undecided" and not self.agrees


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
    return ("undecided" if passed is None else "pass" if passed else "fail"), str(reason)


def _files(directory: Path) -> list[tuple[Path, SetKind]]:
    if not directory.is_dir():
        return [(directory, _FOLDERS.get(directory.parent.name, "tuned"))]
    here = sorted(directory.glob("*.yaml"))
    if directory.name in _FOLDERS:
        return [(p, _FOLDERS[directory.name]) for p in here]
    return [(p, "tuned") for p in here] + [
        (p, kind) for folder, kind in _FOLDERS.items()
        for p in sorted((directory / folder).glob("*.yaml"))]


def load_items(directory: Path = LABELLED_DIR) -> list[tuple[str, LabelledItem]]:
    """Every labelled item with its file:line; all errors raised together."""
    return [(where, item) for where, item, _ in load_sets(directory)]


def load_sets(directory: Path = LABELLED_DIR) -> list[tuple[str, LabelledItem, SetKind]]:
    """Every labelled item with its file:line and its set's kind (a file under heldout/ is
    held-out, one under seen/ seen); all errors raised together."""
    files = _files(directory)
    if not files or not files[0][0].exists():
        raise CaseFileError([f"{directory}: no labelled *.yaml files"])
    items: list[tuple[str, LabelledItem, SetKind]] = []
    errors: list[str] = []
    for path, kind_of_set in files:
        data, lines, problems = read_list(path, "a labelled file is a list of items")
        if problems:
            errors += problems
            continue
        name = f"{path.parent.name}/{path.name}" if kind_of_set != "tuned" and \
            directory.is_dir() and directory.name not in _FOLDERS else path.name
        for i, raw in enumerate(data):
            where = f"{name}:{line_of((i,), lines)}"
            try:
                item = LabelledItem.model_validate(raw)
                kind = item.check.get("kind")
                if kind not in authored():
                    raise ValueError(f"unknown assertion kind {kind!r}")
                if item.language not in LANGUAGES:
                    raise ValueError(f"unknown language {item.language!r}; known:"
                                     f" {', '.join(LANGUAGES)}")
                authored()[kind].args.model_validate(
                    {k: v for k, v in item.check.items() if k != "kind"})
            except (ValidationError, ValueError) as exc:
                first = str(exc).splitlines()
                errors.append(f"{where}: {' '.join(first[:3])}")
                continue
            items.append((where, item, kind_of_set))
    if errors:
        raise CaseFileError(errors)
    return items


def measure(items: list[tuple[str, LabelledItem]] | list[tuple[str, LabelledItem, SetKind]]
            ) -> list[Outcome]:
    out = []
    for entry in items:
        where, item = entry[0], entry[1]
        kind_of_set: SetKind = entry[2] if len(entry) > 2 else "tuned"  # type: ignore[misc]
        try:
            got, reason = _run(item)
        except Exception as exc:  # a check that raises disagrees with every label
            got, reason = "error", f"the check raised {type(exc).__name__}: {exc}"
        out.append(Outcome(where, item.check["kind"], item.verdict, got, reason,
                           item.adversarial, item.answer, item.language, kind_of_set))
    return out


@dataclass(frozen=True)
class Figures:
    """One row of the report: labelled items, decided ones, agreement on the decided, the
    share undecided, false passes and false fails."""

    items: int
    adversarial: int
    decided: int
    agreed: int
    undecided: int
    false_passes: int
    false_fails: int
    unclear: int

    @classmethod
    def of(cls, outcomes: list[Outcome]) -> Figures:
        labelled = [o for o in outcomes if o.labelled]
        decided = [o for o in labelled if o.got != "undecided"]
        return cls(len(labelled), sum(o.adversarial for o in labelled), len(decided),
                   sum(o.agrees for o in decided), len(labelled) - len(decided),
                   sum(o.false_pass for o in decided),
                   sum(o.expected == "pass" and o.got != "pass" for o in decided),
                   len(outcomes) - len(labelled))

    @property
    def agreement(self) -> float | None:
        """Agreement on decided verdicts; None when nothing was decided (no figure, not
        100%)."""
        return self.agreed / self.decided if self.decided else None

    @property
    def undecided_share(self) -> float:
        return self.undecided / self.items if self.items else 0.0

    def row(self, name: str) -> str:
        agreement = "—" if self.agreement is None else f"{self.agreement:.1%}"
        return (f"{name:<26} {self.items:>5} {self.adversarial:>5} {agreement:>7}"
                f" {self.undecided_share:>7.1%} {self.false_passes:>6} {self.false_fails:>6}"
                + (f"  ({self.unclear} unclear)" if self.unclear else ""))


HEADER = (f"{'':<26} {'items':>5} {'adv':>5} {'agree':>7} {'undec':>7} {'fPASS':>6}"
          f" {'fFAIL':>6}")


def _rows(outcomes: list[Outcome], key: Callable[[Outcome], str]) -> dict[str, Figures]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[key(o)].append(o)
    return {k: Figures.of(v) for k, v in sorted(groups.items())}


def report(outcomes: list[Outcome], out: TextIO) -> float:
    """Per set (tuned, seen, held-out), agreement on decided verdicts, the share undecided and false
    passes, per kind and per language; then every disagreement and every undecided verdict
    with the check's reason. Returns the tuned corpus's agreement on decided verdicts (the
    held-out sets', then the seen sets', when there is no tuned one)."""
    print("agree: agreement on decided verdicts; undec: the share undecided; fPASS / fFAIL:"
          " the check passed what a reader fails / failed what a reader passes", file=out)
    figures: dict[str, Figures] = {}
    for kind_of_set in ("tuned", "seen", "held-out"):
        mine = [o for o in outcomes if o.set == kind_of_set]
        if not mine:
            continue
        print(f"\n{kind_of_set} sets", file=out)
        print(HEADER, file=out)
        for kind, row in _rows(mine, lambda o: o.kind).items():
            print(row.row(kind), file=out)
        languages = _rows(mine, lambda o: o.language)
        if len(languages) > 1:
            for language, row in languages.items():
                print(row.row(f"language {language}"), file=out)
        figures[kind_of_set] = Figures.of(mine)
        print(figures[kind_of_set].row("all"), file=out)
    missing = sorted(set(authored()) - {o.kind for o in outcomes})
    if missing:
        print(f"kinds with no labelled item: {', '.join(missing)}", file=out)
    for o in outcomes:
        if o.disagrees or (o.labelled and o.got == "undecided"):
            answer = " ".join(o.answer.split())
            mark = "?" if o.got == "undecided" else "≠"
            print(f"\n{mark} {o.where} {o.kind}: labelled {o.expected}, check says {o.got}"
                  f"\n    {o.reason}\n    answer: “{answer[:300]}”", file=out)
    main = figures.get("tuned") or figures.get("held-out") or figures.get("seen")
    return main.agreement or 0.0 if main is not None else 0.0
