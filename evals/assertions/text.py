"""Assertions on the answer's words."""

from __future__ import annotations

import re

from pydantic import field_validator

from evals.assertions._registry import Args, Verdict, assertion
from evals.assertions._text import contains_phrase, fold, plain, sentences
from evals.record import Fixtures, RecordedTurn


class ValueArg(Args):
    value: str

    @field_validator("value")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        return v


class LiteralsArg(Args):
    value: list[str]

    @field_validator("value")
    @classmethod
    def _not_empty(cls, v: list[str]) -> list[str]:
        if not v or any(not s.strip() for s in v):
            raise ValueError("give at least one non-empty literal")
        return v


def _quote(answer: str, limit: int = 160) -> str:
    flat = " ".join(answer.split())
    return f"“{flat[:limit]}{'…' if len(flat) > limit else ''}”"


@assertion("contains_all", args=LiteralsArg)
def contains_all(turn: RecordedTurn, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = fold(turn.answer)
    missing = [lit for lit in args.value if fold(lit) not in text]
    if missing:
        return False, f"missing {missing} in {_quote(turn.answer)}"
    return True, f"contains {args.value}"


@assertion("not_contains_any", args=LiteralsArg)
def not_contains_any(turn: RecordedTurn, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = fold(turn.answer)
    present = [lit for lit in args.value if fold(lit) in text]
    if present:
        lit = present[0]
        at = text.find(fold(lit))
        return False, f"contains {lit!r}: “…{text[max(0, at - 60):at + len(lit) + 60]}…”"
    return True, f"contains none of {args.value}"


_DONE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(i'?ve|i have|i)\s+(just\s+)?(updated|resolved|closed|changed|marked|set|applied|"
        r"saved|completed|reopened|moved)\b",
        r"\b(has|have)\s+(now\s+)?been\s+(updated|resolved|closed|changed|marked|set|applied|"
        r"saved|completed|reopened|moved)\b",
        r"\b(is|are)\s+now\s+(resolved|closed|updated|marked|set|in progress|open)\b",
        r"^\s*(done|all done|all set)\b",
        r"\bsuccessfully\b",
    )
]
_ABOUT_THE_CARD = re.compile(
    r"\b(card|confirm|confirmation|once you|when you|after you|will be|would be|pending|"
    r"waiting|propos)", re.IGNORECASE
)


@assertion("not_claimed_done")
def not_claimed_done(turn: RecordedTurn, args: Args, fixtures: Fixtures) -> Verdict:
    for sentence in sentences(turn.answer):
        if _ABOUT_THE_CARD.search(sentence):
            continue
        if any(p.search(sentence) for p in _DONE):
            return False, f"claims the change was made: “{sentence}”"
    return True, "claims no change as made"


@assertion("mentions_tool", args=ValueArg)
def mentions_tool(turn: RecordedTurn, args: ValueArg, fixtures: Fixtures) -> Verdict:
    machine = next((m for m in fixtures.machines if m.name.lower() == args.value.lower()
                    or m.slug == args.value), None)
    if contains_phrase(plain(turn.answer), args.value):
        return True, f"names {args.value}"
    if machine and f"/tools/{machine.slug}" in turn.answer:
        return True, f"links {machine.name}"
    return False, f"does not name {args.value}: {_quote(turn.answer)}"
