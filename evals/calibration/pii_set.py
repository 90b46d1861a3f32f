"""The labelled conversation turns for the personal-data scrubber (evals/calibration/pii.yaml,
pii-holdout.yaml and pii-blind.yaml): each turn with the personal data planted in it, by kind,
and the decoys that must survive. A turn may say its language (`lang`, default `en`) and where
it stands (`where`: `visitor`, what a person typed, the default; or `tool_args`, a tool call's
JSON arguments string, scrubbed as from-conversations scrubs a call's arguments).

A label's `text` stands for every place it occurs in its turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals.load.yamlfile import read_items

PII_SET = Path(__file__).parent / "pii.yaml"
# Written later, in the same form, and never used to adjust the scrubber.
PII_HOLDOUT = Path(__file__).parent / "pii-holdout.yaml"
# Written blind (by someone who had seen neither the detectors nor the other sets), in several
# languages, with tool-call arguments and student ids; measured before any change made for it.
PII_BLIND = Path(__file__).parent / "pii-blind.yaml"
PII_SETS = (PII_SET, PII_HOLDOUT, PII_BLIND)


class PiiSetError(ValueError):
    """The labelled set is unreadable or wrong; the message names file:line."""


class Planted(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["name", "phone", "email", "address", "student_id"]
    text: str = Field(min_length=1)


class Decoy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["machine", "room", "ticket", "date", "time", "part", "measure", "other"]
    text: str = Field(min_length=1)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    lang: str = Field(default="en", pattern=r"^[a-z]{2,3}$")
    where: Literal["visitor", "tool_args"] = "visitor"
    text: str = Field(min_length=1)
    pii: list[Planted] = []
    keep: list[Decoy] = []


@dataclass(frozen=True)
class Span:
    """Characters [start, end) of a turn, labelled with a kind."""

    start: int
    end: int
    kind: str
    text: str


def spans(text: str, labels: list[Planted] | list[Decoy]) -> list[Span]:
    """Every place each label's text occurs in the turn."""
    out = []
    for label in labels:
        at = text.find(label.text)
        while at >= 0:
            out.append(Span(at, at + len(label.text), label.kind, label.text))
            at = text.find(label.text, at + 1)
    return out


def load_turns(path: Path = PII_SET) -> list[Turn]:
    """Every labelled turn; a label whose text is not in its turn, or a repeated id, is an
    error naming file:line."""
    read, errors = read_items(path, Turn, "a list of labelled turns", "turn")
    turns, seen = [], set()
    for turn, line in read:
        where = f"{path.name}:{line}"
        if turn.id in seen:
            errors.append(f"{where}: duplicate id {turn.id!r}")
        seen.add(turn.id)
        for text in [label.text for label in turn.pii] + [label.text for label in turn.keep]:
            if text not in turn.text:
                errors.append(f"{where}: {turn.id}: {text!r} is not in the turn's text")
        turns.append(turn)
    if errors:
        raise PiiSetError("\n".join(errors))
    return turns
