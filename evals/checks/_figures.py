"""Which numbers an answer states as a spec field's value, and whose (no_fabricated_specs).

A number is a field's value when its unit says so (W, µm, nm; dimensions for build volume and
work area) or, unitless or a length, when a field is named near it: in its own comma-part of
the clause if that part names one, else anywhere in the clause (the nearest). Labels, counts,
times, money and other quantities are never a field's value. A figure is compared with what
the fixture records for the machine its part (else clause, else sentence) names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.catalog import MachineRecord
from evals.checks._text import all_names, machine_mentions, spans_of
from evals.fixtures.catalog import SPEC_FIELD_WORDS, Fixtures

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
# A number with one of these after it measures or counts something else.
_OTHER_UNIT = re.compile(
    r"^\s*-?\s*(?:mm/s|m/s|cm/s|mm/min|in/s|ipm|rpm|"
    r"min|mins|minutes?|h|hr|hrs|hours?|s|sec|secs|seconds?|days?|weeks?|months?|"
    r"years?|%|percent|people|persons?|students?|staff|parts?|pieces?|copies|times|prints?|"
    r"pm|am|°|degrees?|c\b|f\b|ml|l\b|litres?|liters?|g\b|grams?|kg|euros?|dollars?|gbp|"
    r"v\b|volts?|kv|amps?|amperes?|a\b|hz|khz|mhz|ohms?|"
    r"pages?|steps?|sheets?|units?|machines?|printers?|lasers?|layers?\b(?!\s+height)|"
    r"files?|jobs?|bookings?|slots?|passes|pass\b|st|nd|rd|th)", re.IGNORECASE)
# A number after one of these is a label: desk 3, room 2.14, page 12, #2.
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:room|desk|bench|page|pages|p|pp|step|steps|section|chapter|ticket|floor|level|"
    r"building|table|figure|fig|version|v|option|bay|slot|unit|no|number|ext|extension|"
    r"phone|line|item|rule|point|appendix|part|model|batch|locker|shelf|door|station|"
    r"channel|switch|box|cabinet|row|week|day|year|grade|speed|frequency|freq|temperature|"
    r"temp|time|passes|focus|offset|price|cost|queue|position)\.?|[#$€£])\s*$",
    re.IGNORECASE)
_LENGTH_FIELDS = frozenset({"build_volume", "work_area", "max_part_height", "resolution"})
_COMMA = re.compile(r"(?<!\d),|,(?!\d{3}\b)")
_FIGURES = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


@dataclass(frozen=True)
class Stated:
    values: tuple[float, ...]  # one figure, or the figures of a dimension
    text: str
    fields: frozenset[str]
    machines: tuple[MachineRecord, ...]  # whose figure it is (all, when it names none)


def _to_float(text: str) -> float:
    return float(text.replace(",", ""))


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def _field_spans(text: str) -> list[tuple[int, int, str]]:
    found = [(s, e, f) for f, words in SPEC_FIELD_WORDS.items() for w in words
             for s, e in spans_of(text, w)]
    found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    kept: list[tuple[int, int, str]] = []
    for s, e, f in found:  # the longest name wins: "layer height" is not "height"
        if not any(ks <= s and e <= ke for ks, ke, _ in kept):
            kept.append((s, e, f))
    return kept


def _whose(text: str, fixtures: Fixtures) -> tuple[MachineRecord, ...]:
    slugs = {m.slug for m in machine_mentions(text, fixtures)}
    return tuple(m for m in fixtures.machines if m.slug in slugs) if len(slugs) == 1 else ()


def stated_figures(sentence: str, start: int, end: int, fixtures: Fixtures) -> list[Stated]:
    """Every figure the clause sentence[start:end] states as some field's value."""
    clause = sentence[start:end]
    # Names are not figures ("Form 4", "Speedy 400"); nor are times and dates.
    text = _blank(clause, [sp for n in all_names(fixtures) for sp in spans_of(clause, n)])
    text = re.sub(r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b",
                  lambda m: " " * len(m.group(0)), text)
    cuts = [0, *[m.end() for m in _COMMA.finditer(text)], len(text) + 1]
    parts = list(zip(cuts, cuts[1:], strict=False))
    named = _field_spans(text)

    def part_of(pos: float) -> tuple[int, int]:
        return next((p for p in parts if p[0] <= pos < p[1]), parts[-1])

    def near(pos: float) -> list[tuple[int, int, str]]:
        s, e = part_of(pos)
        mine = [n for n in named if s <= n[0] < e]
        return mine or named

    def machines(pos: float) -> tuple[MachineRecord, ...]:
        s, e = part_of(pos)
        return (_whose(clause[s:e], fixtures) or _whose(clause, fixtures)
                or _whose(sentence, fixtures) or fixtures.machines)

    out: list[Stated] = []
    dims_spans = []
    for m in _DIMS.finditer(text):
        dims_spans.append((m.start(), m.end()))
        numbers = tuple(float(n) for n in re.findall(_N, m.group(0)))
        by_unit = frozenset({"build_volume"} if len(numbers) == 3 else
                            {"build_volume", "work_area"})
        close = {f for _, _, f in near(m.start())}
        targets = frozenset(close & by_unit) if close else by_unit
        out.append(Stated(numbers, m.group(0).strip(), targets, machines(m.start())))
    text = _blank(text, dims_spans)
    for m in _NUMBER.finditer(text):
        before, after = text[:m.start()], text[m.end():]
        if _LABEL_BEFORE.search(before) or _OTHER_UNIT.match(after):
            continue
        unit_fields = next((fields for pattern, fields in _FIELD_UNITS if pattern.match(after)),
                           None)
        centre = (m.start() + m.end()) / 2
        if unit_fields is not None:  # W, µm, nm name their field whatever else is named
            targets = unit_fields
        elif named:
            nearest = min(near(centre),
                          key=lambda sp: min(abs(sp[0] - centre), abs(sp[1] - centre)))
            targets = frozenset({nearest[2]})
            if _LENGTH_UNIT.match(after) and nearest[2] not in _LENGTH_FIELDS:
                targets = frozenset()
        else:
            continue
        out.append(Stated((_to_float(m.group(0)),), m.group(0), targets, machines(centre)))
    return out


def recorded(field: str, machines: tuple[MachineRecord, ...]) -> set[tuple[float, ...]]:
    """The figures each machine's record gives the field, one tuple per record."""
    return {tuple(_to_float(n) for n in _FIGURES.findall(v))
            for m in machines if (v := m.specs.get(field))} - {()}


def matches(values: tuple[float, ...], known: set[tuple[float, ...]]) -> bool:
    """A single figure matches any recorded figure; a dimension matches a record's figures
    (in any order)."""
    if len(values) == 1:
        return any(values[0] in k for k in known)
    return any(sorted(values) == sorted(k) for k in known)
