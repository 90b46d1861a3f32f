"""Grounding: no machine the lab lacks, no invented spec, references to real documents."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import field_validator

from app.catalog import SPEC_FIELDS, MachineRecord
from evals.assertions._registry import Args, Verdict, assertion
from evals.assertions._text import (
    all_names,
    clauses,
    denied,
    has_phrase,
    linked_slugs,
    machine_mentions,
    plain,
    sentences,
    spans_of,
)
from evals.fixtures.catalog import EQUIPMENT_LEXICON, SPEC_FIELD_WORDS, names_of
from evals.record import Fixtures, RecordedTurn


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


@assertion("no_unknown_tools")
def no_unknown_tools(turn: RecordedTurn, args: Args, fixtures: Fixtures) -> Verdict:
    for label, slug in linked_slugs(turn.answer):
        if slug not in fixtures.slugs:
            return False, f"links /tools/{slug} (“{label}”), which is not in the catalogue"
    catalogue = {n for mach in fixtures.machines for n in names_of(mach)}
    unknown = [t for t in EQUIPMENT_LEXICON if not _resolves(t, fixtures)]
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


_N = r"\d+(?:\.\d+)?"
_LEN = r"(?:\s*(?:mm|cm|m|in|inch|inches|\"))"
_DIMS = re.compile(rf"(?<![\w.]){_N}{_LEN}?(?:\s*(?:x|×|\*|by)\s*{_N}{_LEN}?){{1,2}}(?![\w.])",
                   re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.#/:-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w:/])|"
                     r"(?<![\w.#/:-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?=[a-zA-Zµ°%])")
# Units that say which field a number is the value of.
_FIELD_UNITS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"^\s*-?\s*(?:k?w|watts?|watt)\b", re.IGNORECASE), frozenset({"laser_power"})),
    (re.compile(r"^\s*(?:µm|μm|um|microns?|micrometres?|micrometers?|dpi)\b", re.IGNORECASE),
     frozenset({"resolution"})),
    (re.compile(r"^\s*nm\b", re.IGNORECASE), frozenset({"wavelength"})),
)
_LENGTH_UNIT = re.compile(r"^\s*-?\s*(?:mm|cm|m|in|inch|inches|millimet(?:re|er)s?|"
                          r"centimet(?:re|er)s?)\b", re.IGNORECASE)
# A number with one of these after it counts something else: time, share, people, money…
_OTHER_UNIT = re.compile(
    r"^\s*-?\s*(?:min|mins|minutes?|h|hr|hrs|hours?|s|sec|secs|seconds?|days?|weeks?|months?|"
    r"years?|%|percent|people|persons?|students?|staff|parts?|pieces?|copies|times|prints?|"
    r"pm|am|°|degrees?|c\b|f\b|ml|l\b|litres?|liters?|g\b|grams?|kg|euros?|dollars?|gbp|"
    r"pages?|steps?|sheets?|units?|machines?|printers?|lasers?|layers?\b(?!\s+height)|"
    r"files?|jobs?|bookings?|slots?|st|nd|rd|th)", re.IGNORECASE)
# A number after one of these is a label: desk 3, room 2.14, page 12, #2.
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:room|desk|bench|page|pages|p|pp|step|steps|section|chapter|ticket|floor|level|"
    r"building|table|figure|fig|version|v|option|bay|slot|unit|no|number|ext|extension|"
    r"phone|line|item|rule|point|appendix|part|model|batch|locker|shelf|door|station|"
    r"channel|switch|box|cabinet|row|week|day|year|grade)\.?|[#$€£])\s*$",
    re.IGNORECASE)
_LENGTH_FIELDS = frozenset({"build_volume", "work_area", "max_part_height", "resolution"})


@dataclass(frozen=True)
class _Stated:
    value: float
    text: str
    fields: frozenset[str]


def _to_float(text: str) -> float:
    return float(text.replace(",", ""))


def _field_spans(clause: str) -> list[tuple[int, int, str]]:
    found = [(s, e, f) for f, words in SPEC_FIELD_WORDS.items() for w in words
             for s, e in spans_of(clause, w)]
    found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    kept: list[tuple[int, int, str]] = []
    for s, e, f in found:
        if not any(ks <= s and e <= ke for ks, ke, _ in kept):
            kept.append((s, e, f))
    return kept


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def stated_figures(clause: str, fixtures: Fixtures) -> list[_Stated]:
    """Every number a clause states as some spec field's value, with the field(s)."""
    # Names are not figures: "Form 4", "Speedy 400".
    text = _blank(clause, [sp for n in all_names(fixtures) for sp in spans_of(clause, n)])
    text = re.sub(r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b",
                  lambda m: " " * len(m.group(0)), text)
    named = _field_spans(text)
    out: list[_Stated] = []
    dims_spans = []
    for m in _DIMS.finditer(text):
        dims_spans.append((m.start(), m.end()))
        numbers = re.findall(_N, m.group(0))
        by_unit = frozenset({"build_volume"} if len(numbers) == 3 else
                            {"build_volume", "work_area"})
        in_clause = {f for _, _, f in named} & by_unit
        targets = frozenset(in_clause) if in_clause else (by_unit if not named else frozenset())
        out += [_Stated(float(n), n, targets) for n in numbers]
    text = _blank(text, dims_spans)
    for m in _NUMBER.finditer(text):
        before, after = text[:m.start()], text[m.end():]
        if _LABEL_BEFORE.search(before) or _OTHER_UNIT.match(after):
            continue
        unit_fields = next((fields for pattern, fields in _FIELD_UNITS if pattern.match(after)),
                           None)
        if unit_fields is not None:  # W, µm, nm name their field whatever else is named
            targets = unit_fields
        elif named:
            centre = (m.start() + m.end()) / 2
            nearest = min(named, key=lambda sp: min(abs(sp[0] - centre), abs(sp[1] - centre)))
            targets = frozenset({nearest[2]})
            if _LENGTH_UNIT.match(after) and nearest[2] not in _LENGTH_FIELDS:
                targets = frozenset()
        else:
            continue
        out.append(_Stated(_to_float(m.group(0)), m.group(0), targets))
    return out


def _recorded(field: str, machines: tuple[MachineRecord, ...]) -> set[float]:
    values = [v for m in machines if (v := m.specs.get(field))]
    return {_to_float(n) for v in values for n in re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", v)}


_COMMA = re.compile(r"(?<!\d),|,(?!\d{3}\b)")


def _parts(sentence: str) -> list[str]:
    """A sentence's clauses, split at commas too (not inside 1,000)."""
    return [p for start, end in clauses(sentence) for p in _COMMA.split(sentence[start:end])]


def _whose(text: str, fixtures: Fixtures) -> tuple[MachineRecord, ...]:
    slugs = {m.slug for m in machine_mentions(text, fixtures)}
    return tuple(m for m in fixtures.machines if m.slug in slugs) if len(slugs) == 1 else ()


@assertion("no_fabricated_specs", args=FieldsArg)
def no_fabricated_specs(turn: RecordedTurn, args: FieldsArg, fixtures: Fixtures) -> Verdict:
    wanted = set(args.fields)
    for sentence in sentences(turn.answer):
        for part in _parts(sentence):
            # A figure is checked against the machine its clause (or sentence) is about.
            machines = _whose(part, fixtures) or _whose(sentence, fixtures) or fixtures.machines
            for figure in stated_figures(part, fixtures):
                for field in sorted(figure.fields & wanted):
                    known = _recorded(field, machines)
                    if figure.value not in known:
                        recorded = "no value" if not known else f"only {sorted(known)}"
                        whose = machines[0].name if len(machines) == 1 else "the catalogue"
                        return False, (f"“{figure.text}” is attributed to {field}, but"
                                       f" {whose} records {recorded} for it: “{sentence}”")
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
    cited = [t for t in wanted if has_phrase(text, t)]
    if cited:
        return True, f"references {cited[0]}"
    return False, f"references none of {wanted}"
