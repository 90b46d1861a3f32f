"""Grounding: no machine the lab lacks, no invented spec, references to real documents."""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import field_validator

from app.catalog import SPEC_FIELDS
from evals.checks._figures import (
    converted,
    matches,
    near,
    recorded,
    recorded_unit,
    stated_figures,
)
from evals.checks._parse import parse
from evals.checks._registry import Args, Doubt, Verdict, assertion
from evals.checks._stance import answers_no, stance
from evals.checks._stance_surface import NEGATION, in_use_here
from evals.checks._text import (
    clauses,
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
_MODEL = re.compile(r"\s+(?:[A-Za-z]*\d[\w+]*|(?!I['’])[A-Z]{1,4}\+?)(?![\w-])"
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


# Nouns that name a kind of machine: a phrase they head that no catalogue machine answers to
# ("the fiber laser", "one of the FDM printers", "the EinScan scanner") may be a machine the
# lexicon has never heard of.
MACHINE_HEADS = frozenset("""
printer laser cutter engraver router mill saw scanner press lathe plotter welder sander
grinder drill oven station machine chamber cabinet booth former kiln
""".split())
# "<word> <machine noun>" where the parse splits the phrase ("the scroll saw" read as a verb).
_HEADS = "|".join(sorted(MACHINE_HEADS))
_HEADED = re.compile(rf"(?<![\w'’])([A-Za-z][\w-]{{2,}})\s+(?:{_HEADS})(?:e?s)?\b",
                     re.IGNORECASE)
# A machine noun numbered as a unit: "Laser Cutter 2" is no catalogue unit's label.
_NUMBERED = re.compile(rf"\b(?:{_HEADS})s?\s+#?\d+\b", re.IGNORECASE)
# Words that say which of the lab's machines, not another machine: "our printer".
# ("the smaller laser", "the other printer", "a desktop laser" may be a second machine: those
# words are not here.)
PLAIN_MODIFIERS = frozenset("""
a an the our this that these those one ones main only both either any two lab's makerlab
your my their his her its no every each which what whose cutting printing engraving laser's
of and or
""".split())


@lru_cache(maxsize=16)
def _catalogue_words(fixtures: Fixtures) -> frozenset[str]:
    words: set[str] = set()
    for m in fixtures.machines:
        for text in (*names_of(m), m.brand, m.category, m.specs.get("technology") or ""):
            words |= {w.lower() for w in re.findall(r"[\w+]+", text or "")}
    return frozenset(words)


@lru_cache(maxsize=16)
def _name_words(fixtures: Fixtures) -> frozenset[str]:
    """The capitalized words of the catalogue's own machine names and brands ("form",
    "trotec", "speedy")."""
    words: set[str] = set()
    for m in fixtures.machines:
        for text in (m.name, m.brand):
            words |= {w.lower() for w in re.findall(r"[A-Za-z]\w*", text or "")
                      if w[0].isupper()}
    return frozenset(words)


def _unnamed_machines(sentence: str, taken: list[tuple[int, int]], fixtures: Fixtures
                      ) -> list[tuple[int, int]]:
    """Phrases headed by a machine noun whose words no catalogue machine has, outside the
    names already found: where a machine the lexicon lacks may be named."""
    known = _catalogue_words(fixtures)
    names = _name_words(fixtures)
    out = []
    for token in parse(sentence):
        if token.pos_ == "PROPN" and token.dep_ != "compound" and token.is_title and \
                token.lower_ not in known:
            left = [c for c in token.lefts if c.dep_ == "compound" and c.pos_ == "PROPN"]
            if left and {c.lower_ for c in left} <= names:
                start = min(c.idx for c in left)  # "the Form Wash": a name's word, another
                end = token.idx + len(token.text)
                if not any(s <= start and end <= e for s, e in taken):  # longer: its own
                    out.append((start, end))
            continue
        if token.pos_ not in ("NOUN", "PROPN") or token.lemma_.lower() not in MACHINE_HEADS:
            continue
        left = [c for c in token.lefts if c.dep_ in ("compound", "amod", "nmod", "nummod")]
        if not left:
            continue
        start = min(c.left_edge.idx for c in left)
        end = token.idx + len(token.text)
        words = {t.lower_ for c in left for t in c.subtree if t.is_alpha or t.like_num}
        if not words - known - PLAIN_MODIFIERS:
            continue
        if any(s < end and start < e for s, e in taken):
            continue
        out.append((start, end))
    for m in _NUMBERED.finditer(sentence):  # a longer name than a catalogue one is its own
        if not any(s <= m.start() and m.end() <= e for s, e in [*taken, *out]):
            out.append((m.start(), m.end()))
    for m in _HEADED.finditer(sentence):  # what the parse split or misread
        start, end = m.start(), m.end()
        if m.group(1).lower() in known | PLAIN_MODIFIERS or m.group(1)[0].isdigit() or any(
                s < end and start < e for s, e in [*taken, *out]):
            continue
        out.append((start, end))
    return out


_COUNTS = {"both": 2, "two": 2, "three": 3, "four": 4, "five": 5, "2": 2, "3": 3, "4": 4,
           "5": 5}
# The lab's own set of machines counted: "both laser cutters", "our two resin printers".
_COUNTED = re.compile(r"\b(?:(both)(?:\s+of)?(?:\s+(?:our|the))?|(?:our|the|all)\s+"
                      r"(two|three|four|five|[2-5]))\s+((?:[\w-]+\s+){0,2}?[\w-]+?)s\b",
                      re.IGNORECASE)


@lru_cache(maxsize=16)
def _units_of_kind(fixtures: Fixtures) -> dict[str, int]:
    """How many units the catalogue has of each kind a machine goes by ("laser cutter": 1,
    "resin printer": 2): its category and its lower-case aliases."""
    units: dict[str, int] = {}
    for m in fixtures.machines:
        for kind in {m.category.lower(), *(a.lower() for a in names_of(m) if a.islower())}:
            units[kind] = units.get(kind, 0) + max(len(m.units), 1)
    return units


def _more_than_the_lab_has(sentence: str, fixtures: Fixtures) -> str | None:
    """A count of the lab's machines of a kind above the units the catalogue has of it
    ("Both laser cutters are free" where the lab has one laser cutter), in a sentence that
    denies nothing."""
    if NEGATION.search(sentence):
        return None
    units = _units_of_kind(fixtures)
    for m in _COUNTED.finditer(sentence):
        count = _COUNTS[(m.group(1) or m.group(2)).lower()]
        kind = " ".join(m.group(3).lower().split())
        have = next((n for k, n in units.items() if k == kind or k.endswith(" " + kind)), None)
        if have is not None and count > have:
            return f"{m.group(0)} (the catalogue has {have})"
    return None


@assertion("no_unknown_tools", reads="en")
def no_unknown_tools(turn: Transcript, args: Args, fixtures: Fixtures) -> Verdict:
    for label, slug in linked_slugs(turn.answer):
        if slug not in fixtures.slugs:
            return False, f"links /tools/{slug} (“{label}”), which is not in the catalogue"
    catalogue, unknown = _names(fixtures)
    all_sentences = sentences(turn.answer)
    doubt: Doubt | None = None  # every name the check could not place
    for index, sentence in enumerate(all_sentences):
        if counted := _more_than_the_lab_has(sentence, fixtures):
            return False, f"counts more machines than the lab has: “{counted}”: “{sentence}”"
        known_spans = [span for n in catalogue for span in spans_of(sentence, n)]
        found = [span for t in unknown for span in _spans(sentence, t)]
        found += _other_models(sentence, fixtures, catalogue)
        names = [*known_spans, *found]
        # At one place the longest name wins: "Trotec Rayjet" is not the catalogue's "Trotec".
        for start, end in sorted(set(found), key=lambda x: (x[0], -(x[1] - x[0]))):
            if any(s <= start and end <= e and (s, e) != (start, end)
                   for s, e in [*known_spans, *found]):
                continue  # part of a longer name: "Glowforge" in "Glowforge Pro"
            found_stance = stance(sentence, start, end, names)
            name = sentence[start:end]
            if found_stance in (None, "unplaced", "named"):
                doubt = doubt.also(sentence, name) if doubt else Doubt(
                    f"cannot tell whether this names “{name}”, which the lab does not have, as"
                    f" one of the lab's machines: “{sentence}”",
                    question="lab_has", asks=((sentence, name),))
                continue
            if found_stance in ("denied", "person"):
                continue  # "we don't have a Glowforge" is the right answer; "ask Roland"
            if found_stance == "asked" and index + 1 < len(all_sentences) and \
                    answers_no(all_sentences[index + 1]):
                continue  # "Do we have a Glowforge? We don't."
            return False, (f"{_SAYS[found_stance]} “{sentence[start:end]}”, which the lab does"
                           f" not have: “{sentence}”")
        for start, end in _unnamed_machines(sentence, names, fixtures):
            if in_use_here(sentence, start, end):  # "the belt sander in the corner"
                return False, (f"places “{sentence[start:end]}”, which no catalogue machine"
                               f" goes by, in the lab: “{sentence}”")
            if stance(sentence, start, end, names) not in ("denied", "person"):
                name = sentence[start:end]
                doubt = doubt.also(sentence, name) if doubt else Doubt(
                    f"cannot tell whether “{name}” is a machine the catalogue lacks (no"
                    f" catalogue machine goes by those words, and the lexicon does not know"
                    f" them): “{sentence}”", question="lab_has", asks=((sentence, name),))
    if doubt is not None:
        return None, doubt
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


# Fields that measure one machine's size: a height may be read as part of a build volume.
SIZES = frozenset({"build_volume", "work_area", "max_part_height"})


@assertion("no_fabricated_specs", args=FieldsArg, reads="en")
def no_fabricated_specs(turn: Transcript, args: FieldsArg, fixtures: Fixtures) -> Verdict:
    wanted = set(args.fields)
    unsure: str | None = None  # the first figure the check could not place
    for sentence in sentences(turn.answer):
        for start, end in clauses(sentence, colon=False):  # "Layer height: 0.05 mm" is one
            for figure in stated_figures(sentence, start, end, fixtures):
                fields = sorted(figure.fields & wanted)
                if not fields and figure.fields & SIZES and wanted & SIZES:
                    unsure = unsure or (f"cannot tell whether “{figure.text}”, read as"
                                        f" {'/'.join(sorted(figure.fields))}, is part of the"
                                        f" machine's {'/'.join(sorted(wanted & SIZES))}:"
                                        f" “{sentence}”")
                    continue
                if figure.open is not None and (fields or (not figure.fields and wanted & {
                        "build_volume", "work_area", "max_part_height"})):
                    unsure = unsure or (f"cannot tell whether “{figure.text}” is stated as the"
                                        f" machine's {'/'.join(fields or sorted(wanted))}"
                                        f" ({figure.open}): “{sentence}”")
                    continue
                for field in fields:
                    known = recorded(field, figure.machines)
                    if matches(figure.values, known):
                        continue
                    other = converted(figure.values, figure.unit,
                                      recorded_unit(field, figure.machines))
                    if other is not None and near(other, known):
                        continue  # "100 × 61 cm" is the recorded 1000 × 610 mm
                    shown = figure.text
                    whose = (figure.machines[0].name if len(figure.machines) == 1
                             else "the catalogue")
                    what = "no value" if not known else "only " + " or ".join(
                        " x ".join(f"{v:g}" for v in k) for k in sorted(known))
                    return False, (f"“{shown}” is attributed to {field}, but {whose}"
                                   f" records {what} for it: “{sentence}”")
    if unsure is not None:
        return None, unsure
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
