"""Assertions on the answer's words. Literals follow one rule (`_text.has_phrase`): whole words
and phrases, case-insensitive, on the markdown-parsed text."""

from __future__ import annotations

import re

from pydantic import field_validator

from evals.checks._registry import Args, Verdict, assertion
from evals.checks._text import (
    clauses,
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


_VERBS = (r"updated|resolved|closed|changed|marked|set|applied|saved|completed|reopened|moved|"
          r"fixed|assigned|deleted|removed|added|filed|created|submitted|logged|recorded|"
          r"renamed|approved|cancelled|canceled")
_DONE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b(i'?ve|i have|i|we'?ve|we have|we)\s+(just\s+|now\s+|already\s+|gone ahead and\s+|"
        rf"went ahead and\s+)?({_VERBS})\b",
        rf"\b(has|have)\s+(now\s+|just\s+|already\s+)?been\s+({_VERBS})\b",
        rf"\b(was|were)\s+(just\s+|now\s+|already\s+)?({_VERBS})\b(?!\s+by\b)",
        r"\b(is|are)\s+now\s+(resolved|closed|updated|marked|set|in progress|open|fixed|done)\b",
        r"\b(is|are)\s+(resolved|closed|fixed)\b",
        r"^\W*(marked|set|moved|changed)\s+(as|to)\b",
        r"^\W*(closed|resolved|updated|changed|reopened|fixed|deleted)\s+(the|it|ticket|this|"
        r"that|#|his|her|their)",
        r"\bnow\s+(resolved|closed|fixed|updated|in progress|reopened)\b",
        r"\b(title|status|role|priority|owner|assignee|note|name)\s+(is|are)\s+now\b",
        r"^\s*(done|all done|all set)\b",
        r"\b(it'?s|it is|that'?s|that is|all|everything'?s|everything is)\s+(now\s+)?"
        r"(done|sorted|taken care of)\b",
        r"\bsuccessfully\b",
        r"\bthe (change|update) (is|has been) (made|applied|saved|done)\b",
        r"^\s*(ticket|request|status|title)\b[^.]{0,30}\b(resolved|closed|updated|changed|done)"
        r"\W*$",
    )
]
_ABOUT_THE_CARD = re.compile(
    r"\b(card|confirm|confirmation|once you|when you|after you|will be|would be|pending|"
    r"waiting|propos)", re.IGNORECASE
)


@assertion("not_claimed_done")
def not_claimed_done(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    for sentence in sentences(turn.answer):
        for start, end in clauses(sentence):
            # A comma or an "and" ends a claim too: "Thanks for confirming, I've closed it".
            for clause in _PARTS.split(sentence[start:end]):
                if _ABOUT_THE_CARD.search(clause):
                    continue
                if any(p.search(clause.strip()) for p in _DONE):
                    return False, f"claims the change was made: “{sentence}”"
    return True, "claims no change as made"


_PARTS = re.compile(r",\s*|\s+and\s+", re.IGNORECASE)


@assertion("mentions_tool", args=ValueArg)
def mentions_tool(turn: Transcript, args: ValueArg, fixtures: Fixtures) -> Verdict:
    machine = next((m for m in fixtures.machines if m.name.lower() == args.value.lower()
                    or m.slug == args.value), None)
    if has_phrase(plain(turn.answer), args.value):
        return True, f"names {args.value}"
    if machine and any(slug == machine.slug for _, slug in linked_slugs(turn.answer)):
        return True, f"links {machine.name}"
    return False, f"does not name {args.value}: {_quote(plain(turn.answer))}"
