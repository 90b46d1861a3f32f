"""Text helpers for the checks: markdown-insensitive matching, sentences, denials."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evals.fixtures.catalog import names_of
from evals.record import Fixtures

_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`|~~)")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
DENIAL = re.compile(
    r"\b(don'?t|do not|doesn'?t|does not|isn'?t|is not|aren'?t|are not|no longer|not|no|"
    r"never|lack|lacks|without|unavailable|unfortunately|we only have|only has|only have|"
    r"instead of)\b",
    re.IGNORECASE,
)


def plain(text: str) -> str:
    """Markdown emphasis removed, links reduced to their label, quotes straightened."""
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub("", text)
    return text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", plain(text)).strip().lower()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(plain(text)) if s.strip()]


def contains_phrase(text: str, phrase: str) -> bool:
    """Whole-word, case-insensitive containment."""
    pattern = r"(?<![A-Za-z0-9])" + re.escape(phrase.lower()) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text.lower()) is not None


def links(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _LINK.finditer(text)]


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    slug: str
    name: str


def unique_names(fixtures: Fixtures) -> dict[str, str]:
    """name (lower) -> slug, for names that belong to exactly one catalogue machine."""
    owners: dict[str, set[str]] = {}
    for m in fixtures.machines:
        for n in names_of(m):
            owners.setdefault(n.lower(), set()).add(m.slug)
    return {n: next(iter(s)) for n, s in owners.items() if len(s) == 1}


def machine_mentions(answer: str, fixtures: Fixtures) -> list[Mention]:
    """Catalogue machines the answer names (plain, bold, linked, or by a unique alias), in
    order; at one place the longest name wins ("Ultimaker 3 Extended" over "Ultimaker 3")."""
    text = plain(answer)
    found: list[Mention] = []
    names = sorted(unique_names(fixtures).items(), key=lambda kv: -len(kv[0]))
    taken: list[tuple[int, int]] = []
    for name, slug in names:
        pattern = r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])"
        for m in re.finditer(pattern, text, re.IGNORECASE):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(Mention(m.start(), m.end(), slug, m.group(0)))
    for _, target in links(answer):
        link = re.match(r"^/tools/([a-z0-9-]+)", target)
        if link and link.group(1) in fixtures.slugs:
            pos = answer.find(target)
            found.append(Mention(pos, pos, link.group(1), target))
    return sorted(found, key=lambda x: x.start)
