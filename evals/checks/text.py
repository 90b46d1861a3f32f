"""Assertions on the answer's words. Literals follow one rule (`_text.has_phrase`): whole words
and phrases, case-insensitive, on the markdown-parsed text."""

from __future__ import annotations

from pydantic import field_validator

from evals.checks._claims import claims
from evals.checks._registry import Args, Verdict, assertion
from evals.checks._text import (
    find_phrase,
    has_phrase,
    linked_slugs,
    plain,
    sentences,
)
from evals.fixtures.catalog import Fixtures
from evals.record.transcript import Transcript


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
def contains_all(turn: Transcript, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    missing = [lit for lit in args.value if not has_phrase(text, lit)]
    if missing:
        return False, f"missing {missing} in {_quote(text)}"
    return True, f"contains {args.value}"


@assertion("not_contains_any", args=LiteralsArg)
def not_contains_any(turn: Transcript, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    for lit in args.value:
        m = find_phrase(text, lit)
        if m:
            return False, f"contains {lit!r}: “…{text[max(0, m.start() - 60):m.end() + 60]}…”"
    return True, f"contains none of {args.value}"


@assertion("not_claimed_done")
def not_claimed_done(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    for sentence in sentences(turn.answer):
        found = claims(sentence)
        if found is not None:
            return False, f"claims the change was made (“{found.text}”): “{sentence}”"
    return True, "claims no change as made"


@assertion("mentions_tool", args=ValueArg)
def mentions_tool(turn: Transcript, args: ValueArg, fixtures: Fixtures) -> Verdict:
    machine = next((m for m in fixtures.machines if m.name.lower() == args.value.lower()
                    or m.slug == args.value), None)
    if has_phrase(plain(turn.answer), args.value):
        return True, f"names {args.value}"
    if machine and any(slug == machine.slug for _, slug in linked_slugs(turn.answer)):
        return True, f"links {machine.name}"
    return False, f"does not name {args.value}: {_quote(plain(turn.answer))}"
