"""Assertions on the answer's words. Literals follow one rule (`_text.has_phrase`): whole words
and phrases, case-insensitive, on the markdown-parsed text."""

from __future__ import annotations

import re
from typing import Any

from pydantic import SerializerFunctionWrapHandler, field_validator, model_serializer

from evals.checks._claims import claims, unplaced
from evals.checks._language import LANGUAGES
from evals.checks._registry import Args, Doubt, Verdict, assertion
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
    # The language the literals are written in: an answer in another is undecided (a Spanish
    # answer holds none of the English words a check forbids). `any`: names, read anywhere.
    language: str = "en"

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str) -> str:
        if v != "any" and v not in LANGUAGES:
            raise ValueError(f"unknown language {v!r}; known: any, {', '.join(LANGUAGES)}")
        return v

    @model_serializer(mode="wrap")
    def _as_before(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # English, the default, is left out: a literal check hashes and shows as it did
        # before literals had a language.
        data: dict[str, Any] = handler(self)
        if data.get("language") == "en":
            del data["language"]
        return data

    @field_validator("value")
    @classmethod
    def _not_empty(cls, v: list[str]) -> list[str]:
        if not v or any(not s.strip() for s in v):
            raise ValueError("give at least one non-empty literal")
        return v


def _quote(answer: str, limit: int = 160) -> str:
    flat = " ".join(answer.split())
    return f"“{flat[:limit]}{'…' if len(flat) > limit else ''}”"


def _literal_language(args: LiteralsArg) -> str | None:
    return None if args.language == "any" else args.language


@assertion("contains_all", args=LiteralsArg, reads=_literal_language)
def contains_all(turn: Transcript, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    missing = [lit for lit in args.value if not has_phrase(text, lit)]
    if missing:
        return False, f"missing {missing} in {_quote(text)}"
    return True, f"contains {args.value}"


@assertion("not_contains_any", args=LiteralsArg, reads=_literal_language)
def not_contains_any(turn: Transcript, args: LiteralsArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    for lit in args.value:
        m = find_phrase(text, lit)
        if m:
            return False, f"contains {lit!r}: “…{text[max(0, m.start() - 60):m.end() + 60]}…”"
    return True, f"contains none of {args.value}"


# A change shown as "Low → Urgent" is what a card proposes, when the answer names one; an
# arrow between other words is a path ("My bookings → Cancel").
_VALUES = (r"open|closed|resolved|in\s+progress|waiting(?:\s+for\s+parts)?|on\s+hold|high|"
           r"low|medium|normal|urgent|critical|unassigned")
_CHANGE_SHOWN = re.compile(
    rf"(?:\b(?:{_VALUES})\W*\s*(?:→|->|⇒|=>)|(?:→|->|⇒|=>)\s*\W*(?:{_VALUES})\b|\b(?:status|"
    rf"priority|assignee|owner|title)\b[^.]*(?:→|->|⇒|=>))", re.IGNORECASE)
_PROPOSED = re.compile(r"\b(?:card|cards|confirm\w*|propos\w*|pending|approv\w*)\b",
                       re.IGNORECASE)


_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
# A lead-in that puts the list after the visitor's confirmation or in what a card will do:
# "Once you confirm:", "When you press Confirm, this happens:", "Here's what the card will do:".
_CONDITION_LEAD = re.compile(
    r"(?:\b(?:once|when|after|if)\s+you(?:'ve|\s+have)?\s+(?:confirm|press|tap|click|approve|hit)"
    r"(?:s|ed)?\b|\b(?:card|it|this|that)\s+will\s+(?:do|happen|change)\b|\bwhat\s+will\s+"
    r"happen\b)[^:]*:\s*$", re.IGNORECASE)


def _after_a_condition(answer: str) -> list[str]:
    """The list items under a lead-in that puts them after a condition or in the future
    ("Once you confirm:", "Here's what will happen:"), as plain text."""
    items: list[str] = []
    under = False
    for line in answer.splitlines():
        item = _LIST_ITEM.match(line)
        if item and under:
            items.append(" ".join(plain(item.group(1)).split()))
        elif line.strip():
            under = _CONDITION_LEAD.search(plain(line)) is not None
    return items


_NEGATION = re.compile(r"\b(?:no|not|never)\b|n't\b", re.IGNORECASE)


def _names_a_card(text: str) -> bool:
    """The answer names a card, a proposal or a confirmation, not to say there is none ("Your
    approval isn't needed", "No card is needed")."""
    return any(not _NEGATION.search(text[max(0, m.start() - 20):m.end() + 20])
               for m in _PROPOSED.finditer(text))


@assertion("not_claimed_done", reads="en")
def not_claimed_done(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    doubt: Doubt | None = None
    proposed = _names_a_card(plain(turn.answer))
    later = {" ".join(s.split()) for item in _after_a_condition(turn.answer)
             for s in sentences(item)}
    for sentence in sentences(turn.answer):
        if " ".join(sentence.split()) in later:
            continue  # "Once you confirm: 1. A ticket is created …": what will happen
        found = claims(sentence)
        if found is not None:
            return False, f"claims the change was made (“{found.text}”): “{sentence}”"
        if not proposed and _CHANGE_SHOWN.search(plain(sentence)):
            doubt = doubt.also(sentence) if doubt else Doubt(
                f"cannot tell whether a change shown as “… → …” was made or only proposed (the"
                f" answer names no card or proposal): “{sentence}”",
                question="change_done", asks=((sentence, ""),))
            continue
        open_ = unplaced(sentence)
        if open_ is not None:
            doubt = doubt.also(sentence) if doubt else Doubt(
                f"cannot tell whether “{open_.text}” claims a change was made: “{sentence}”",
                question="change_done", asks=((sentence, ""),))
    if doubt is not None:
        return None, doubt
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
