"""The labelled simulated-visitor transcripts (evals/calibration/visitor-transcripts.yaml) and
the simulator checks measured on them (`make bench-visitor`).

Each transcript is a visitor's instructions, the conversation (visitor and assistant turns,
the visitor's first), and the failures a careful reader finds in it by the four kinds'
meanings (evals/checks/visitor.py), each at the visitor turn it happens (1-based, the
visitor's turns only; a turn may be "STOP"). The set was written blind, by someone who had
seen no detector, and is never tuned on: its figures say how the checks do on visitors
nobody adjusted them to.

Per kind: the transcripts a detector flags against those a reader labelled, agreement,
precision and recall, and whether a flag names the labelled turn. A kind no detector checks
is said to be unchecked, never counted as agreeing. The conversation's verdict follows any
failure (UNDECIDED), so the whole-conversation figures matter most: a false flag hides the
assistant's real verdict, a miss leaves a simulator error standing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.chat.models import ChatModel, ModelCallError
from evals.calibration.calibrate import Rated
from evals.checks.visitor import check_visitor
from evals.judge import UnreadableVerdict
from evals.judge.visitor import VisitorQuestion, ask_visitor
from evals.load.yamlfile import read_items
from evals.record.transcript import Turn
from evals.record.visitor import KINDS, FailureKind, VisitorCheck

VISITOR_SET = Path(__file__).parent / "visitor-transcripts.yaml"
# A second blind set, mostly clean visitors in everyday words, written after the phrases were
# narrowed and measured once with them.
VISITOR_SET_2 = Path(__file__).parent / "visitor-transcripts-2.yaml"


class VisitorSetError(ValueError):
    """The labelled set is unreadable or wrong; the message names file:line."""


class Instructions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    who: str
    wants: str
    knows: str | None = None
    does_not_know: str | None = None
    will_say: str | None = None
    wont_say: str | None = None
    refuses: str | None = None


class Said(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["visitor", "assistant"]
    text: str


class Label(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: FailureKind
    turn: int = Field(ge=1)


class Transcript(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    visitor: Instructions
    style: str
    turns: list[Said] = Field(min_length=1)
    failures: list[Label] = []
    why: str = ""

    @property
    def visitor_turns(self) -> int:
        return sum(t.role == "visitor" for t in self.turns)

    def as_turns(self) -> list[Turn]:
        """The conversation as a run records it (the visitor is the user)."""
        return [Turn(role="user" if t.role == "visitor" else "assistant", content=t.text)
                for t in self.turns]


def load_transcripts(path: Path = VISITOR_SET) -> list[Transcript]:
    """Every labelled transcript; a repeated id, a conversation not opened by the visitor or
    a label at a turn the visitor never took is an error naming file:line."""
    read, errors = read_items(path, Transcript, "a list of labelled transcripts",
                              "transcript")
    out, seen = [], set()
    for t, line in read:
        where = f"{path.name}:{line}"
        if t.id in seen:
            errors.append(f"{where}: duplicate id {t.id!r}")
        seen.add(t.id)
        if t.turns[0].role != "visitor":
            errors.append(f"{where}: {t.id}: the visitor speaks first")
        for label in t.failures:
            if label.turn > t.visitor_turns:
                errors.append(f"{where}: {t.id}: {label.kind} at visitor turn {label.turn},"
                              f" but the visitor takes {t.visitor_turns}")
        out.append(t)
    if errors:
        raise VisitorSetError("\n".join(errors))
    return out


@dataclass(frozen=True)
class KindFigures:
    kind: str
    checked: bool
    flagged: int  # transcripts the detector flags with this kind
    labelled: int  # transcripts a reader labelled with it
    both: int
    right_turn: int  # of `both`, flagged at a labelled turn
    total: int

    @property
    def agreement(self) -> float | None:
        if not self.checked:
            return None
        return (self.total - self.flagged - self.labelled + 2 * self.both) / self.total

    @property
    def precision(self) -> float | None:
        return self.both / self.flagged if self.checked and self.flagged else None

    @property
    def recall(self) -> float | None:
        return self.both / self.labelled if self.checked and self.labelled else None


@dataclass(frozen=True)
class Measured:
    kinds: list[KindFigures]
    # whole conversations: flagged at all against labelled at all
    false_flags: list[str]  # clean by the label, flagged by a detector
    caught: int  # broken by the label (in a checked kind), flagged
    missed: list[str]  # broken by the label in a checked kind, not flagged
    unread: int  # transcripts with a visitor turn not read (another language)
    total: int


def measure(transcripts: list[Transcript]) -> Measured:
    checks: dict[str, VisitorCheck] = {t.id: check_visitor(t.as_turns()) for t in transcripts}
    figures = []
    for kind in KINDS:
        # A kind counts on the transcripts where it was checked (a visitor in another
        # language is not read by the phrases: nothing is claimed of it).
        seen = [t for t in transcripts if kind in checks[t.id].kinds]
        flagged = {t.id for t in seen if any(f.kind == kind for f in checks[t.id].failures)}
        labelled = {t.id for t in seen if any(f.kind == kind for f in t.failures)}
        right = sum(1 for t in seen if t.id in flagged & labelled and
                    {f.turn for f in checks[t.id].failures if f.kind == kind}
                    & {f.turn for f in t.failures if f.kind == kind})
        figures.append(KindFigures(kind, bool(seen), len(flagged), len(labelled),
                                   len(flagged & labelled), right, len(seen)))
    false_flags = [t.id for t in transcripts if not t.failures and checks[t.id].failed]
    broken = [t for t in transcripts
              if any(f.kind in checks[t.id].kinds for f in t.failures)]
    missed = [t.id for t in broken if not checks[t.id].failed]
    return Measured(figures, false_flags, len(broken) - len(missed), missed,
                    sum(1 for c in checks.values() if c.unread), len(transcripts))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render(m: Measured, path: Path = VISITOR_SET) -> str:
    lines = [f"{m.total} labelled transcripts ({path.name});"
             f" {m.unread} with a visitor turn not read (another language)",
             f"{'kind':<18} {'read in':<8} {'flagged':>7} {'labelled':>8} {'both':>5}"
             f" {'agree':>6} {'prec.':>6} {'recall':>6} {'turn':>5}"]
    for f in m.kinds:
        lines.append(f"{f.kind:<18} {f.total if f.checked else 'none':<8} {f.flagged:>7}"
                     f" {f.labelled:>8} {f.both:>5} {_pct(f.agreement):>6}"
                     f" {_pct(f.precision):>6} {_pct(f.recall):>6} {f.right_turn:>5}")
    lines += [f"conversations: {m.caught} broken ones caught (in the kinds checked),"
              f" {len(m.missed)} missed ({', '.join(m.missed) or 'none'}),"
              f" {len(m.false_flags)} clean ones flagged"
              f" ({', '.join(m.false_flags) or 'none'})",
              "kinds not checked need a reader; nothing is claimed of them"]
    return "\n".join(lines)


async def rate_visitor(question: VisitorQuestion, transcripts: list[Transcript],
                       model: ChatModel, concurrency: int = 2
                       ) -> tuple[list[Rated], dict[str, str]]:
    """The judge's answer to one kind's question about each labelled transcript, read as a
    verdict on the visitor ("fail": it failed that way), and the labels; an unclear or
    unreadable answer, or a failed call, is left unrated."""
    limit = asyncio.Semaphore(concurrency)

    async def one(t: Transcript) -> Rated:
        async with limit:
            try:
                answer, _, why = await ask_visitor(model, question, t.visitor.model_dump(),
                                                   t.as_turns())
            except (UnreadableVerdict, ModelCallError) as exc:
                return Rated(t.id, None, str(exc))
        return Rated(t.id, {"yes": "fail", "no": "pass"}.get(answer), why)

    rated = await asyncio.gather(*(one(t) for t in transcripts))
    labels = {t.id: "fail" if any(f.kind == question.kind for f in t.failures) else "pass"
              for t in transcripts}
    return list(rated), labels
