"""How the checks read an answer: markdown parsed into blocks, sentences and clauses; one rule
for literals; machine mentions; and where a negation reaches.

The README's "The assertion vocabulary" is the specification of everything here; the labelled
corpus (tests/evals/labelled/) measures it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from evals.fixtures.catalog import EQUIPMENT_LEXICON, Fixtures, names_of

_MD = MarkdownIt("commonmark").enable("table")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "})
# Words after which a full stop does not end a sentence.
_ABBREVIATIONS = {"p", "pp", "e.g", "i.e", "eg", "ie", "approx", "dr", "no", "nr", "vs", "etc",
                  "fig", "ca", "mr", "ms", "mrs", "st", "prof", "min", "max", "incl", "ext"}
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)")
_CLAUSE_MARK = re.compile(
    r"\s*(?:;|:(?=\s|$)|\s[—–-]{1,2}\s|—|\(|\))\s*"
    r"|\s+(?=(?:but|however|instead|though|although|so|because|while|whereas|which|"
    r"otherwise|yet)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Parsed:
    """An answer read as markdown: plain text per block, and every link."""

    blocks: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (label, target)

    @property
    def text(self) -> str:
        return "\n".join(self.blocks)


def normalise(text: str) -> str:
    return text.translate(_QUOTES)


@lru_cache(maxsize=4096)
def parse(answer: str) -> Parsed:
    """Markdown → plain blocks (emphasis and code marks dropped, links as their label)."""
    blocks: list[str] = []
    found_links: list[tuple[str, str]] = []
    row: list[str] | None = None
    for token in _MD.parse(normalise(answer)):
        if token.type in ("fence", "code_block", "html_block"):
            blocks.append(token.content.strip())
            continue
        if token.type == "tr_open":  # a table row is one block: "Laser power | 80"
            row = []
            continue
        if token.type == "tr_close" and row is not None:
            blocks.append(" | ".join(c for c in row if c))
            row = None
            continue
        if token.type != "inline":
            continue
        out: list[str] = []
        label_start: int | None = None
        target = ""
        for child in token.children or []:
            if child.type in ("text", "code_inline"):
                out.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                out.append(" ")
            elif child.type == "image":
                out.append(child.content)
            elif child.type == "link_open":
                label_start, target = len(out), str(child.attrGet("href") or "")
            elif child.type == "link_close" and label_start is not None:
                found_links.append(("".join(out[label_start:]), target))
                label_start = None
        text = re.sub(r"[ \t]+", " ", "".join(out)).strip()
        if row is not None:
            row.append(text)
        else:
            blocks.append(text)
    return Parsed(tuple(b for b in blocks if b), tuple(found_links))


def plain(answer: str) -> str:
    return parse(answer).text


def sentences(answer: str) -> list[str]:
    """The answer's sentences, block by block."""
    out: list[str] = []
    for block in parse(answer).blocks:
        start = 0
        for m in _SENTENCE_END.finditer(block):
            before = block[start:m.start()].split()
            word = before[-1].lower().rstrip(".") if before else ""
            if m.group(0).startswith(".") and len(m.group(0)) == 1 and (
                    word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
                continue
            out.append(block[start:m.end()].strip())
            start = m.end()
        if block[start:].strip():
            out.append(block[start:].strip())
    return [s for s in out if s]


_CLAUSE_MARK_NO_COLON = re.compile(_CLAUSE_MARK.pattern.replace(r"|:(?=\s|$)", ""),
                                   re.IGNORECASE)


def clauses(sentence: str, *, colon: bool = True) -> list[tuple[int, int]]:
    """(start, end) of each clause of a sentence; commas do not split (see `denied`). With
    colon=False a colon does not split either ("Layer height: 0.05 mm" is one statement)."""
    spans, start = [], 0
    for m in (_CLAUSE_MARK if colon else _CLAUSE_MARK_NO_COLON).finditer(sentence):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(sentence)))
    return [(s, e) for s, e in spans if e > s]


def clause_at(sentence: str, pos: int) -> tuple[int, int]:
    for s, e in clauses(sentence):
        if s <= pos < e:
            return s, e
    return 0, len(sentence)


@lru_cache(maxsize=4096)
def _phrase(phrase: str) -> re.Pattern[str]:
    """A literal as a whole-word, case-insensitive pattern; spaces match any spaces."""
    words = [re.escape(w) for w in normalise(phrase).split()]
    body = r"[^\S\n]+".join(words)  # blocks are joined by newlines: a phrase stays in one
    left = r"(?<![\w])" if re.match(r"\w", phrase.strip()) else ""
    right = r"(?![\w])" if re.search(r"\w$", phrase.strip()) else ""
    return re.compile(left + body + right, re.IGNORECASE)


def find_phrase(text: str, phrase: str) -> re.Match[str] | None:
    return _phrase(phrase).search(normalise(text))


def has_phrase(text: str, phrase: str) -> bool:
    """The one literal rule: whole words and phrases, case-insensitive, on parsed text."""
    return find_phrase(text, phrase) is not None


@lru_cache(maxsize=4096)
def _name_pattern(name: str) -> re.Pattern[str]:
    # A machine name, also in the plural ("two Glowforges").
    return re.compile(r"(?<![\w])" + re.escape(name) + r"(?:'?s|es)?(?![\w])", re.IGNORECASE)


def spans_of(text: str, name: str) -> list[tuple[int, int]]:
    if name.casefold() not in text.casefold():  # most names are in most sentences not at all
        return []
    return [(m.start(), m.end()) for m in _name_pattern(name).finditer(text)]


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    slug: str
    name: str


@lru_cache(maxsize=16)  # fixtures are cached per catalogue: one computation each
def identifying_names(fixtures: Fixtures) -> dict[str, str]:
    """name (lower) -> slug, for names that pick out exactly one catalogue machine. A generic
    alias ("laser cutter") counts only while no other machine is of the same category."""
    categories: dict[str, int] = {}
    for m in fixtures.machines:
        categories[m.category] = categories.get(m.category, 0) + 1
    owners: dict[str, set[str]] = {}
    for m in fixtures.machines:
        for n in names_of(m):
            generic = n == n.lower()
            if generic and categories[m.category] > 1:
                continue
            owners.setdefault(n.lower(), set()).add(m.slug)
    return {n: next(iter(s)) for n, s in owners.items() if len(s) == 1}


def machine_mentions(text: str, fixtures: Fixtures) -> list[Mention]:
    """Catalogue machines a plain text names, in order; at one place the longest name wins
    ("Ultimaker 3 Extended" over "Ultimaker 3")."""
    found: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for name, slug in sorted(identifying_names(fixtures).items(), key=lambda kv: -len(kv[0])):
        for start, end in spans_of(text, name):
            if any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            found.append(Mention(start, end, slug, text[start:end]))
    return sorted(found, key=lambda x: x.start)


def linked_slugs(answer: str) -> list[tuple[str, str]]:
    """(label, slug) of every /tools/<slug> link."""
    out = []
    for label, target in parse(answer).links:
        m = re.match(r"^/tools/([^/#?)\s]+)", target)
        if m:
            out.append((label, m.group(1)))
    return out


@lru_cache(maxsize=16)
def all_names(fixtures: Fixtures) -> tuple[str, ...]:
    """Every catalogue name and lexicon term, longest first: what a list of machines holds."""
    names = {n for m in fixtures.machines for n in names_of(m)} | set(EQUIPMENT_LEXICON)
    return tuple(sorted(names, key=len, reverse=True))


# What may stand between a negation and the machine it covers: articles, machine nouns and
# the joints of a list of names.
FILLER = frozenset("""
a an any the our one single such other another kind type sort of like as e.g eg or nor and
& / either model brand laser lasers cutter cutters engraver engravers printer printers 3d
resin fdm sla msla cnc router routers mill mills milling machine machines saw saws band table
vinyl plasma waterjet scanner scanners drill press co2 fiber fibre desktop large small big pro
proper dedicated industrial commercial hobby word
""".split())
# What may follow a denied name: the end of the clause, a list joint, a place, a relative
# clause. Anything else ("Glowforge presets") makes the name a modifier: not denied.
AFTER_DENIED = frozenset("""
or nor and & / , that which who whom you we i in here there anywhere
is are isn't aren't was were wasn't weren't has have hasn't haven't
model models unit units either whatsoever sorry yet anymore currently
""".split())
# A negation's reach may also end with where: "… in our catalogue", "… here".
PLACE = frozenset("""
in at here the this our lab makerspace space workshop catalogue catalog inventory list right
now currently moment anymore any more either sorry unfortunately yet at all
""".split())
_WORD = re.compile(r"[\w][\w.'&/+-]*|&|/")


def _masked(text: str, fixtures: Fixtures) -> str:
    """The text with every machine name blanked out (names are list material)."""
    chars = list(text)
    for name in all_names(fixtures):
        for s, e in spans_of(text, name):
            chars[s:e] = " " * (e - s)
    return "".join(chars)


def _only(text: str, allowed: frozenset[str]) -> bool:
    words = [w.lower().rstrip(".") for w in _WORD.findall(text.replace(",", " "))]
    return all(w in allowed or w.rstrip("s") in allowed for w in words)


@dataclass(frozen=True)
class Trigger:
    pattern: re.Pattern[str]
    needs_having: bool = False  # "neither X nor Y" is a denial only with "… is part of the lab"


def _t(p: str, needs_having: bool = False) -> Trigger:
    return Trigger(re.compile(p, re.IGNORECASE), needs_having)


# Who may be said not to have it: the lab, us, or (for "can't find") the assistant.
_LAB = r"(?:we|the\s+lab|our\s+lab|this\s+lab|the\s+makerspace|this\s+makerspace|makerlab)"
NOT_HAVING = (
    _t(rf"\b{_LAB}\s+(?:don't|doesn't|didn't|do not|does not|did not|no longer)\s+"
       r"(?:currently\s+|actually\s+|really\s+)?(?:have|has|own|stock|carry|offer|keep)\b"),
    _t(rf"\b{_LAB}\s+(?:have|has|had|own|owns)\s+(?:no|neither)\b"),
    _t(rf"\b{_LAB}(?:'ve|'s|\s+have|\s+has)?\s+never\s+(?:had|have|owned|stocked|carried)\b"),
    _t(r"\bthere(?:'s| is| are|'re)\s+no\b"),
    _t(r"\bthere\s+(?:isn't|aren't|is not|are not)\b"),
    _t(r"^\W*no\b"),  # "No Glowforge here": a bare "no" opens its clause
    _t(rf"\b{_LAB}\s+lack(?:s)?\b"),
    _t(r"\b(?:i|we)\s+(?:can't|cannot|can not|couldn't|could not|don't|do not)\s+"
       r"(?:find|see)\b"),
    _t(r"^\W*neither\b", needs_having=True),
)
_HAVING_AFTER = re.compile(
    r"^\s*(?:is|are)\s+(?:part\s+of|in\s+(?:our|the|this)\s+(?:lab|makerspace|catalogue|catalog"
    r"|inventory)|something\s+we\s+have|among\s+our|one\s+of\s+our|listed|stocked|owned)\b",
    re.IGNORECASE)
_NOT_HAVING_AFTER = re.compile(
    r"^\s*(?:(?:is|are|was|were)\s+not|isn't|aren't|wasn't|weren't|'s\s+not|'re\s+not)\s+"
    r"(?:currently\s+|actually\s+|really\s+)?(?:something\s+(?:we|the\s+lab)\s+(?:have|has|own)"
    r"|part\s+of\s+(?:our|the|this)\s+(?:lab|makerspace|catalogue|catalog|inventory)"
    r"|in\s+(?:our|the|this)\s+(?:lab's\s+)?(?:catalogue|catalog|inventory|collection)"
    r"|one\s+of\s+(?:ours|our\s+machines)|among\s+our\s+machines|listed|stocked|owned"
    r"|on\s+(?:our|the)\s+(?:list|catalogue|catalog)|a\s+(?:machine|tool)\s+(?:we|the\s+lab))\b"
    r"|^\s*(?:is|are)\s+(?:something|a\s+machine|one)\s+(?:we|the\s+lab)\s+(?:don't|doesn't|"
    r"do\s+not|does\s+not)\s+have\b",
    re.IGNORECASE)
RULED_OUT = (
    _t(r"\b(?:not|never|no|neither|nor|unlike|isn't|aren't|wasn't|except)\b"),
    _t(r"\b(?:can't|cannot|couldn't|could not|won't|wouldn't)\s+be\b"),
    _t(r"\b(?:rather\s+than|instead\s+of|other\s+than)\b"),
    _t(r"\b(?:don't|do not)\s+think\s+(?:it's|it\s+is|this\s+is|that's|that\s+is)\b"),
)


def denied(sentence: str, start: int, end: int, fixtures: Fixtures,
           triggers: Iterable[Trigger] = NOT_HAVING) -> bool:
    """Whether the name at sentence[start:end] sits inside a negation's reach: the negation in
    the same clause before it with only list material between (a comma-joined list
    continues only while the name's own list item is list material or a place too), or after
    it a negative predicate ("… isn't something we have")."""
    c_start, c_end = clause_at(sentence, start)
    masked = _masked(sentence, fixtures)
    before, after = masked[c_start:start], masked[end:c_end]
    following = [w.lower().rstrip(".!?") for w in _WORD.findall(after.split(",", 1)[0])]
    if triggers is NOT_HAVING and following and following[0] not in AFTER_DENIED | FILLER \
            and following[:2] != ["at", "all"]:
        return False  # "we don't have any Glowforge presets", "… at the moment"
    # A list goes on only while each item is names and places: "we don't have a Glowforge and
    # the Epilog is booked" is not a list of denied machines.
    tail_item = re.split(r",|\b(?:and|or|nor)\b", after, maxsplit=1)[0]
    lead = re.match(r"^[\s,]*(?:(?:or|nor|and|&|/|either|a|an|the|any)\b[\s,]*)*", after)
    rest = after[lead.end():] if lead else after
    for trigger in triggers:
        hits = list(trigger.pattern.finditer(before))
        if not hits:
            continue
        gap = before[hits[-1].end():]
        if not _only(gap, FILLER):
            continue
        joined = "," in gap or re.search(r"\b(?:and|or|nor)\b", gap, re.IGNORECASE)
        if joined and not trigger.needs_having and not _only(tail_item, FILLER | PLACE):
            continue
        if trigger.needs_having and not _HAVING_AFTER.search(rest):
            continue
        return True
    return triggers is NOT_HAVING and bool(_NOT_HAVING_AFTER.search(rest))


_LACKS = re.compile(
    r"\b(?:don't|doesn't|do not|does not|no longer)\s+(?:currently\s+|actually\s+)?"
    r"(?:have|own|stock|carry)\b"
    r"|\b(?:have|has)\s+no\b|\bthere(?:'s| is| are)\s+no\b|\black(?:s|ing)?\b"
    r"|\b(?:isn't|aren't|is not|are not|not)\s+(?:something\s+we\s+have|part\s+of|in\s+(?:our|the"
    r"|this)\s+(?:lab|catalogue|catalog|inventory|makerspace|collection)|one\s+of\s+(?:ours|our))"
    r"|\b(?:can't|cannot|couldn't)\s+find\b|\bnone\s+of\s+(?:our|the\s+lab's)\b"
    r"|\bnot\s+(?:a\s+machine\s+)?(?:we|the\s+lab)\s+(?:have|has|own|owns)\b",
    re.IGNORECASE)


def says_lab_lacks(answer: str) -> bool:
    """The answer says the lab does not have something."""
    return bool(_LACKS.search(plain(answer)))
