"""Grounding: no machine the lab lacks, no invented spec, references to real documents."""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import field_validator

from app.catalog import SPEC_FIELDS
from evals.assertions._registry import Args, Verdict, assertion
from evals.assertions._text import DENIAL, contains_phrase, links, plain, sentences
from evals.fixtures.catalog import EQUIPMENT_LEXICON, SPEC_FIELD_WORDS, names_of
from evals.record import Fixtures, RecordedTurn

_NUMBER = re.compile(r"(?<![A-Za-z#=])\d+(?:[.,]\d+)?")


@lru_cache(maxsize=4096)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(phrase) + r"(?![A-Za-z0-9])", re.IGNORECASE)


def _spans(text: str, phrase: str) -> list[tuple[int, int]]:
    if phrase.casefold() not in text.casefold():  # most phrases are in most sentences not at all
        return []
    return [(m.start(), m.end()) for m in _phrase_pattern(phrase).finditer(text)]


def _resolves(term: str, fixtures: Fixtures) -> bool:
    """A lexicon term names a catalogue machine (by name, alias, extra alias or brand)."""
    t = term.lower()
    for m in fixtures.machines:
        if t == m.brand.lower() or any(t == n.lower() for n in names_of(m)):
            return True
        if any(contains_phrase(n, term) for n in names_of(m)):
            return True
    return False


@assertion("no_unknown_tools")
def no_unknown_tools(turn: RecordedTurn, args: Args, fixtures: Fixtures) -> Verdict:
    for label, target in links(turn.answer):
        m = re.match(r"^/tools/([^/#?)]+)", target)
        if m and m.group(1) not in fixtures.slugs:
            return False, f"links /tools/{m.group(1)} (“{label}”), which is not in the catalogue"
    catalogue_names = {n for mach in fixtures.machines for n in names_of(mach)}
    for sentence in sentences(turn.answer):
        spans = [span for n in catalogue_names for span in _spans(sentence, n)]
        for term in EQUIPMENT_LEXICON:
            for start, end in _spans(sentence, term):
                if any(s <= start and end <= e for s, e in spans):
                    continue  # part of a catalogue machine's name
                if _resolves(term, fixtures) or DENIAL.search(sentence):
                    continue  # "we don't have a Glowforge" is the right answer
                return False, f"offers “{term}”, which the lab does not have: “{sentence}”"
    return True, "every machine named is in the catalogue"


class FieldsArg(Args):
    fields: list[str]

    @field_validator("fields")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("name at least one spec field")
        unknown = [f for f in v if f not in SPEC_FIELDS]
        if unknown:
            raise ValueError(f"unknown spec field(s) {unknown}; known: {list(SPEC_FIELDS)}")
        return v


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", ".")) for n in _NUMBER.findall(text)}


@assertion("no_fabricated_specs", args=FieldsArg)
def no_fabricated_specs(turn: RecordedTurn, args: FieldsArg, fixtures: Fixtures) -> Verdict:
    names = sorted({n for m in fixtures.machines for n in names_of(m)}, key=len, reverse=True)
    for field in args.fields:
        known = set().union(*(
            _numbers(v) for m in fixtures.machines if (v := m.specs.get(field))
        )) if any(m.specs.get(field) for m in fixtures.machines) else set()
        for sentence in sentences(turn.answer):
            lowered = f" {sentence.lower()} "
            if not any(w in lowered for w in SPEC_FIELD_WORDS[field]):
                continue
            stripped = sentence
            for n in names:  # "Form 4", "Speedy 400" are names, not figures
                stripped = re.sub(re.escape(n), " ", stripped, flags=re.IGNORECASE)
            stripped = re.sub(r"\bp(?:age|\.)\s*\d+", " ", stripped, flags=re.IGNORECASE)
            for number in sorted(_numbers(stripped)):
                if number not in known:
                    recorded = "no value" if not known else f"only {sorted(known)}"
                    shown = int(number) if number.is_integer() else number
                    return False, (f"“{shown}” is attributed to {field}, but the fixture records"
                                   f" {recorded} for it: “{sentence}”")
    return True, f"no invented figure for {args.fields}"


class OptionalValueArg(Args):
    value: str | None = None


@assertion("cites_resource", args=OptionalValueArg)
def cites_resource(turn: RecordedTurn, args: OptionalValueArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    titles = sorted(fixtures.all_titles)
    if args.value is not None:
        if args.value not in titles:
            return False, f"{args.value!r} is not a document of any machine ({titles})"
        wanted = [args.value]
    else:
        wanted = titles
    cited = [t for t in wanted if contains_phrase(text, t)]
    if cited:
        return True, f"references {cited[0]}"
    return False, f"references none of {wanted}"
