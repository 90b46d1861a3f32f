"""Grounding: no machine the lab lacks, no invented spec, references to real documents."""

from __future__ import annotations

from functools import lru_cache

from pydantic import field_validator

from app.catalog import SPEC_FIELDS
from evals.checks._figures import matches, recorded, stated_figures
from evals.checks._registry import Args, Verdict, assertion
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


@assertion("no_unknown_tools")
def no_unknown_tools(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    for label, slug in linked_slugs(turn.answer):
        if slug not in fixtures.slugs:
            return False, f"links /tools/{slug} (“{label}”), which is not in the catalogue"
    catalogue, unknown = _names(fixtures)
    for sentence in sentences(turn.answer):
        known_spans = [span for n in catalogue for span in spans_of(sentence, n)]
        found = [(s, e, t) for t in unknown for s, e in spans_of(sentence, t)]
        # At one place the longest name wins: "Trotec Rayjet" is not the catalogue's "Trotec".
        for start, end, _ in sorted(found, key=lambda x: (x[0], -(x[1] - x[0]))):
            if any(s <= start and end <= e and (s, e) != (start, end) for s, e in known_spans):
                continue  # part of a catalogue machine's longer name
            if denied(sentence, start, end, fixtures):
                continue  # "we don't have a Glowforge" is the right answer
            return False, (f"offers “{sentence[start:end]}”, which the lab does not have:"
                           f" “{sentence}”")
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
