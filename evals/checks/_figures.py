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

_N = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_LEN = r"(?:\s*(?:mm|cm|m|in|inch|inches|\"))"
_DIMS = re.compile(rf"(?<![\w.]){_N}{_LEN}?(?:\s*(?:x|×|\*|by)\s*{_N}{_LEN}?){{1,2}}(?!\w|\.\d)",
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
    unit: str | None = None  # its unit as written (mm, cm, in, nm, µm, …), if any
    # Why the check cannot tell whether it is stated as the machine's (a figure in a
    # question of possibilities, in quotation marks, of the visitor's own object), or None.
    open: str | None = None


# Multiples of a field's recorded unit: a figure in another unit is converted before it is
# compared (1000 x 610 mm is 100 x 61 cm and about 39 x 24 in).
TO_BASE = {"mm": 1.0, "cm": 10.0, "m": 1000.0, "in": 25.4, "inch": 25.4, "inches": 25.4,
           '"': 25.4, "nm": 1.0, "µm": 1000.0, "μm": 1000.0, "um": 1000.0}
_UNIT_AFTER = re.compile(r'^\s*(mm|cm|m|inches|inch|in|"|nm|µm|μm|um)(?![\w/])', re.IGNORECASE)
# A figure said in one of these is not stated as the machine's.
_HEDGES = re.compile(r"\b(?:whether|not sure|can't tell|cannot tell|can't say|don't know|"
                     r"guess|forum|figures like|rumou?red|could be either)\b", re.IGNORECASE)
_CAPACITY = re.compile(r"\b(?:up to|max(?:imum)?|at most|as (?:large|big) as)\s*$",
                       re.IGNORECASE)
_OBJECTS = re.compile(r"\b(?:your|sheet|sheets|model|part|piece|board|panel|design|file|"
                      r"object|figurine|box|blank|drawing|stock|A\d)\b", re.IGNORECASE)
_LIGHT = re.compile(r"\b(?:wavelengths?|infrared|beam|light|violet|ultraviolet|uv)\b|\d\s*nm\b",
                    re.IGNORECASE)
_YOUR = re.compile(r"\byour\s+(?:\w+\s+){0,3}$", re.IGNORECASE)
_SIZE_WORDS = re.compile(r"\b(?:tall|high|height|wide|width|long|length|deep|depth)\b",
                         re.IGNORECASE)


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
        numbers = tuple(_to_float(n) for n in re.findall(_N, m.group(0)))
        by_unit = frozenset({"build_volume"} if len(numbers) == 3 else
                            {"build_volume", "work_area"})
        close = {f for _, _, f in near(m.start())}
        targets = frozenset(close & by_unit) if close else by_unit
        units = re.findall(r'(mm|cm|m|inches|inch|in|")(?![\w])', m.group(0), re.IGNORECASE)
        ps, pe = part_of(m.start())
        own = text[ps:pe]
        why = _openness(clause, m.group(0), m.start(), own, fixtures)
        own_fields = [n for n in named if ps <= n[0] < pe]
        lead = sentence[max(0, start - 40):start]  # "a full A1 sheet (841 × 594 mm)"
        if why is None and (_YOUR.search(text[:m.start()]) or (not own_fields and _OBJECTS.search(
                    lead[lead.rfind(",") + 1:] + own))) and \
                not _CAPACITY.search(text[:m.start()]):
            # "your 1200 × 500 mm sheet" is the visitor's, "takes a full 1200 × 800 mm sheet"
            # says what the machine takes: readers part ways, so it is not decided
            why = "a size of the visitor's object, or of what the machine takes"
        out.append(Stated(numbers, m.group(0).strip(), targets, machines(m.start()),
                          units[-1].lower() if units else None, why))
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
            if "resolution" in unit_fields and _LIGHT.search(sentence):
                targets = unit_fields | {"wavelength"}  # "the CO2 beam is at 10.6 µm"
        elif named:
            nearest = min(near(centre),
                          key=lambda sp: min(abs(sp[0] - centre), abs(sp[1] - centre)))
            targets = frozenset({nearest[2]})
            if _LENGTH_UNIT.match(after) and nearest[2] not in _LENGTH_FIELDS:
                targets = frozenset()
        else:
            continue
        unit = _UNIT_AFTER.match(after)
        ps, pe = part_of(m.start())
        why = _openness(clause, m.group(0), m.start(), text[ps:pe], fixtures)
        if why is None and _YOUR.search(before):
            why = "a size of the visitor's object, or of what the machine takes"
        out.append(Stated((_to_float(m.group(0)),), m.group(0), targets, machines(centre),
                          unit.group(1).lower() if unit else None, why))
    for m in _NUMBER.finditer(text):  # a length with a size word and no field named
        after = text[m.end():]
        if named or not _LENGTH_UNIT.match(after) or not _SIZE_WORDS.search(text):
            continue
        if _LABEL_BEFORE.search(text[:m.start()]):
            continue
        out.append(Stated((_to_float(m.group(0)),), m.group(0), frozenset(),
                          machines(m.start()), None,
                          "a size without a field's name: it may be the machine's build"
                          " size or another's"))
    return out


_OTHER_MACHINES = re.compile(r"\b(?:other|some|many|most|older|cheaper|third-party)\s+"
                             r"(?:\w+\s+)?(?:printers?|lasers?|machines?|cutters?)\b",
                             re.IGNORECASE)
_SIZED_OBJECT = re.compile(r"^\s*(?:mm|cm|m|in|inch|inches)?\s*(?:tall|high|wide|long|thick|"
                           r"deep)?\s*(?:box|piece|model|sheet|panel|board|figurine|lamp|"
                           r"object)s?\b", re.IGNORECASE)


def _openness(clause: str, figure: str, at: int = -1, part: str = "",
              fixtures: Fixtures | None = None) -> str | None:
    """Why a figure is not plainly stated as the machine's: in a question of possibilities,
    a hedge, someone else's words, said of other machines (in its own part of the clause,
    which names none of the lab's), or an object's size (`at`: where the figure stands)."""
    if _HEDGES.search(clause):
        return "said in a hedge or a question of possibilities, not stated as the machine's"
    if part and _OTHER_MACHINES.search(part) and fixtures is not None and \
            not machine_mentions(part, fixtures):
        return "said of other machines than the lab's"
    at = clause.find(figure) if at < 0 else at
    if at >= 0 and _SIZED_OBJECT.match(clause[at + len(figure):]):
        return "a size of an object, not plainly the machine's"
    at = clause.find(figure)
    before = clause[:at] if at >= 0 else ""
    if before.count('"') % 2 == 1 or before.rfind("“") > before.rfind("”"):
        return "in quotation marks: someone else's figure"
    return None


def recorded(field: str, machines: tuple[MachineRecord, ...]) -> set[tuple[float, ...]]:
    """The figures each machine's record gives the field, one tuple per record."""
    return {tuple(_to_float(n) for n in _FIGURES.findall(v))
            for m in machines if (v := m.specs.get(field))} - {()}


def recorded_unit(field: str, machines: tuple[MachineRecord, ...]) -> str | None:
    """The unit the records write a field's figures in (mm, nm), when they all agree."""
    units = {u.group(1).lower() for m in machines if (v := m.specs.get(field))
             for u in [_UNIT_AFTER.search(" " + v.split()[-1])] if u}
    return units.pop() if len(units) == 1 else None


# A converted figure matches a recorded one within this share of it: "39 × 24 in" is the
# recorded 1000 × 610 mm (0.9% off), "100 × 60 cm" is not (1.6% off), nor "1 × 1 m".
CONVERTED_WITHIN = 0.012


def converted(values: tuple[float, ...], unit: str | None, base: str | None
              ) -> tuple[float, ...] | None:
    """The stated figures in the records' unit; None when the units are the same, unknown, or
    of another quantity."""
    light = ("nm", "µm", "μm", "um")
    if unit is None or base is None or unit == base or unit not in TO_BASE or \
            base not in TO_BASE or (unit in light) != (base in light):
        return None
    return tuple(v * TO_BASE[unit] / TO_BASE[base] for v in values)


def near(values: tuple[float, ...], known: set[tuple[float, ...]]) -> bool:
    """Converted figures match a record's (in any order) within CONVERTED_WITHIN of each."""
    def close(a: float, b: float) -> bool:
        return abs(a - b) <= CONVERTED_WITHIN * abs(b) if b else a == 0

    if len(values) == 1:
        return any(close(values[0], k_) for k in known for k_ in k)
    return any(len(values) == len(k) and all(
        close(a, b) for a, b in zip(sorted(values), sorted(k), strict=True)) for k in known)


def matches(values: tuple[float, ...], known: set[tuple[float, ...]]) -> bool:
    """A single figure matches any recorded figure; a dimension matches a record's figures
    (in any order)."""
    if len(values) == 1:
        return any(values[0] in k for k in known)
    return any(sorted(values) == sorted(k) for k in known)
