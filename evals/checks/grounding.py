"""Grounding: no machine the lab lacks, no invented spec, references to real documents."""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import field_validator

from app.catalog import SPEC_FIELDS
from evals.checks._figures import matches, recorded, stated_figures
from evals.checks._registry import Args, Verdict, assertion
from evals.checks._stance import answers_no, stance
from evals.checks._text import (
    clauses,
    denied,
    has_phrase,
    linked_slugs,
    plain,
    sentences,
    spans_of,
)
from evals.fixtures.catalog import EQUIPMENT_LEXICON, Fixtures, names_of
from evals.record.transcript import Transcript


def _resolves(term: str, fixtures: Fixtures) -> bool:
    """A lexicon term names a catalogue machine (by name, alias, extra alias or brand)."""
    t = term.lower()
    for m in fixtures.machines:
        names = names_of(m)
        if t == m.brand.lower() or any(t == n.lower() for n in names):
            return True
        if any(has_phrase(n, term) for n in names):
            return True
    return False


@lru_cache(maxsize=16)
def _names(fixtures: Fixtures) -> tuple[frozenset[str], tuple[str, ...]]:
    """The catalogue's names, and the lexicon's names that resolve to no catalogue machine."""
    catalogue = frozenset(n for mach in fixtures.machines for n in names_of(mach))
    return catalogue, tuple(t for t in EQUIPMENT_LEXICON if not _resolves(t, fixtures))


_SAYS = {"offered": "offers", "asked": "asks about", "named": "names"}
# A model code after a catalogue brand: "P1S", "XL", "MK3S+", "3"; not a measure ("the
# Trotec's 1000 × 610 mm bed", "Prusa 250 mm").
_MODEL = re.compile(r"\s+(?:[A-Za-z]*\d[\w+]*|[A-Z]{1,4}\+?)(?![\w-])"
                    r"(?!\s*(?:[×x]\s*\d|mm\b|cm\b|m\b|in\b|W\b|%|°))")


def _spans(sentence: str, term: str) -> list[tuple[int, int]]:
    """Where a lexicon term stands in the sentence; a capitalized term only when it is
    capitalized there too ("Brother" the brand, not "your brother")."""
    return [(s, e) for s, e in spans_of(sentence, term)
            if not term[0].isupper() or sentence[s].isupper()]


@lru_cache(maxsize=16)
def _brands(fixtures: Fixtures) -> tuple[str, ...]:
    """The names a catalogue machine is known by that a model code may follow: its brand, and
    lexicon terms that resolve to it ("Bambu Lab")."""
    terms = {m.brand for m in fixtures.machines if m.brand}
    terms |= {t for t in EQUIPMENT_LEXICON if _resolves(t, fixtures)}
    return tuple(sorted(terms, key=len, reverse=True))


def _other_models(sentence: str, fixtures: Fixtures,
                  catalogue: frozenset[str]) -> list[tuple[int, int]]:
    """A catalogue brand with a model code that makes it no catalogue machine ("Bambu Lab
    P1S" where the lab has the X1 Carbon)."""
    found = []
    lowered = [n.lower() for n in catalogue]
    for brand in _brands(fixtures):
        for start, end in _spans(sentence, brand):
            if sentence[start:end].lower().endswith(("'s", "’s")):
                continue  # "the Trotec's …": what follows is the Trotec's
            model = _MODEL.match(sentence, end)
            if model is None:
                continue
            name = sentence[start:model.end()].lower()
            if not any(n == name or n.startswith(name + " ") or name.endswith(" " + n) or
                       n.endswith(" " + name) for n in lowered):
                found.append((start, model.end()))
    return found


@assertion("no_unknown_tools")
def no_unknown_tools(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    for label, slug in linked_slugs(turn.answer):
        if slug not in fixtures.slugs:
            return False, f"links /tools/{slug} (“{label}”), which is not in the catalogue"
    catalogue, unknown = _names(fixtures)
    all_sentences = sentences(turn.answer)
    for index, sentence in enumerate(all_sentences):
        known_spans = [span for n in catalogue for span in spans_of(sentence, n)]
        found = [span for t in unknown for span in _spans(sentence, t)]
        found += _other_models(sentence, fixtures, catalogue)
        names = [*known_spans, *found]
        # At one place the longest name wins: "Trotec Rayjet" is not the catalogue's "Trotec".
        for start, end in sorted(set(found), key=lambda x: (x[0], -(x[1] - x[0]))):
            if any(s <= start and end <= e and (s, e) != (start, end) for s, e in known_spans):
                continue  # part of a catalogue machine's longer name
            found_stance = stance(sentence, start, end, names)
            if found_stance is None:  # the parse cannot place the name: the word rules
                if denied(sentence, start, end, fixtures):
                    continue
                return False, (f"offers “{sentence[start:end]}”, which the lab does not have"
                               f" (read by the word rules: the parse could not place it):"
                               f" “{sentence}”")
            if found_stance in ("denied", "person"):
                continue  # "we don't have a Glowforge" is the right answer; "ask Roland"
            if found_stance == "asked" and index + 1 < len(all_sentences) and \
                    answers_no(all_sentences[index + 1]):
                continue  # "Do we have a Glowforge? We don't."
            return False, (f"{_SAYS[found_stance]} “{sentence[start:end]}”, which the lab does"
                           f" not have: “{sentence}”")
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


@assertion("no_fabricated_specs", args=FieldsArg)
def no_fabricated_specs(turn: Transcript, args: FieldsArg, fixtures: Fixtures) -> Verdict:
    wanted = set(args.fields)
    for sentence in sentences(turn.answer):
        for start, end in clauses(sentence, colon=False):  # "Layer height: 0.05 mm" is one
            for figure in stated_figures(sentence, start, end, fixtures):
                for field in sorted(figure.fields & wanted):
                    known = recorded(field, figure.machines)
                    if not matches(figure.values, known):
                        shown = figure.text
                        whose = (figure.machines[0].name if len(figure.machines) == 1
                                 else "the catalogue")
                        what = "no value" if not known else "only " + " or ".join(
                            " x ".join(f"{v:g}" for v in k) for k in sorted(known))
                        return False, (f"“{shown}” is attributed to {field}, but {whose}"
                                       f" records {what} for it: “{sentence}”")
    return True, f"no invented figure for {args.fields}"


class OptionalValueArg(Args):
    value: str | None = None


@assertion("cites_resource", args=OptionalValueArg)
def cites_resource(turn: Transcript, args: OptionalValueArg, fixtures: Fixtures) -> Verdict:
    text = plain(turn.answer)
    titles = sorted(fixtures.all_titles)
    if args.value is not None:
        if args.value not in titles:
            return False, f"{args.value!r} is not a document of any machine ({titles})"
        wanted = [args.value]
    else:
        wanted = titles
    cited = [t for t in wanted if has_phrase(text, t)]
    if cited:
        return True, f"references {cited[0]}"
    return False, f"references none of {wanted}"
