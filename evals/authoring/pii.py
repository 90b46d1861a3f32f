"""Personal data in conversation text, found by maintained detectors and replaced by typed
placeholders, for cases made from stored conversations (`python -m evals from-conversations`).

* phone numbers: Google's libphonenumber (`phonenumbers.PhoneNumberMatcher`), any common
  format, read as the regions of EVAL_PII_PHONE_REGIONS (the lab's country first, a number
  possible there; then the regions its visitors come from, a number valid there:
  "617-555-0199", "555 867 5309", "020 7946 0958", "06 12 34 56 78") and, with a country
  code, as any ("+44 20 7946 0958");
* student ids: the university's pattern, EVAL_PII_STUDENT_ID ("U20231234", "matric no.
  20231234");
* person names: Microsoft Presidio's analyzer with its spaCy recogniser, on the English
  pipeline the checks already pin and sha256-check (evals/checks/_parse.py), with its named
  entities, so nothing is downloaded; each PERSON widened to the whole proper name around it;
  plus the proper names the same parse shows given as a name ("I'm X", "called X", "the name
  X"), and the names in the lab's own records; plus the written rules of
  evals/authoring/pii_rules.py: a name a sentence gives in another language or script ("je
  m'appelle X", "ich heiße X", "меня зовут X", "我叫X"), after a title, a greeting or a
  closing sign-off, before an honorific ("李晓华同学", "田中さん"), a Vietnamese full name;
* street addresses: pyap2's US and British address rules (a full address with town and postal
  code, and a US street on its own, "12 Elm Street"), read with the e-mails, phone numbers
  and student ids already found blanked out (so a street right after a phone number is
  found); and streets as Europe and Asia write them (pii_rules.STREET_ABROAD: "12 rue de la
  Paix, 75002 Paris", "Hauptstraße 5"); spaCy's English pipeline has no street entity of its
  own, and Presidio ships no English address recogniser;
* e-mail addresses: one pattern (Presidio's e-mail recogniser checks the domain with
  tldextract, which fetches the public suffix list from the network).

A tool call's arguments (a JSON string) are read value by value (`find_arguments`), and a
value under a key that names a person ("reporter", "contact_name") is a name whatever it looks
like; one under an address, phone or student-id key is of that kind.

Presidio's anonymizer replaces what was found: `[name]`, `[phone]`, `[address]`, `[email]`,
`[student id]`.
What overlaps a protected phrase (a catalogue machine's name or alias) is kept, as are
ticket numbers, dates and times, which no detector here takes for a phone number.
`BLIND_SPOTS` names what the detectors cannot rule out; the summary prints it. Phone numbers
and street addresses are found in pii_contact.py, the written rules in pii_rules.py.
Loading spaCy and Presidio takes a few seconds, so the detectors are built once, on first use.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from evals.authoring import pii_rules
from evals.authoring.pii_contact import addresses, phones
from evals.checks._parse import verified_pipeline
from evals.settings import eval_settings

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpArtifacts
    from presidio_anonymizer import AnonymizerEngine
    from spacy.tokens import Doc, Token

# As written into a case (the form from-conversations has always used for e-mails and phones).
PLACEHOLDERS = {"name": "[name]", "phone": "[phone]", "address": "[address]",
                "email": "[email]", "student_id": "[student id]"}
KINDS = tuple(PLACEHOLDERS)
# How a number without a country code is read (EVAL_PII_PHONE_REGIONS): as the lab's
# country's (the first region) if its length is possible there (made-up and 555 numbers are
# not VALID, and are typed all the same), then as each other region's only if it is a valid
# number there ("020 7946 0958" in Britain): other plans have possible lengths so short that
# sizes and dates would pass.


def phone_regions(codes: str) -> tuple[tuple[str, str], ...]:
    """(region, leniency) for each region of a comma list, the first one POSSIBLE."""
    regions = [c.strip().upper() for c in codes.split(",") if c.strip()]
    return tuple((r, "POSSIBLE" if i == 0 else "VALID") for i, r in enumerate(regions))


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
# What no detector here can rule out, by kind: said in the summary, whatever was found.
BLIND_SPOTS = {
    "name": "names the English model does not tag as a person (it tags some as an"
            " organisation or a place) and no cue gives: a lone or lower-case name, a name"
            " in another language's sentence or in another script without a cue ('my name"
            " is', 'je m'appelle', '我叫'...), 'Surname, Given', a nickname",
    "address": "addresses outside the US and British forms and the written European and"
               " Asian street forms (a street without a number, a flat or district written"
               " around the street, a building or a room named as a place)",
    "phone": "numbers too short or too long for any country's plan, a local number without"
             " its area code, one written with words, a local number of a region not in"
             " EVAL_PII_PHONE_REGIONS",
    "student_id": "ids in another form than EVAL_PII_STUDENT_ID's",
    "email": "addresses written out in words ('jo at example dot org')",
}
_PERSON_SCORE = 0.5  # Presidio's spaCy recogniser scores a PERSON 0.85; lower ones are not kept


@dataclass(frozen=True)
class Found:
    """A piece of personal data: characters [start, end) of the text, and its kind."""

    start: int
    end: int
    kind: str


class Detectors:
    """The detectors for one batch of conversations: `keep` is what must survive (the
    catalogue's machine names and aliases), `names` the private names in the lab's records."""

    def __init__(self, keep: Iterable[str] = (), names: Sequence[str] = (), *,
                 regions: str | None = None, student_id: str | None = None) -> None:
        if regions is None or student_id is None:  # EVAL_PII_PHONE_REGIONS, EVAL_PII_STUDENT_ID
            settings = eval_settings()
            regions = settings.pii_phone_regions if regions is None else regions
            student_id = settings.pii_student_id if student_id is None else student_id
        self._keep = _phrases(keep)
        self._names = _phrases(names)
        self._regions = phone_regions(regions)
        self._student_id = re.compile(student_id)

    def find(self, text: str) -> list[Found]:
        """Every piece of personal data in the text, in order, none overlapping (the longer
        of two overlapping pieces of one kind wins, `_PRIORITY` between kinds), none
        overlapping a protected phrase."""
        artifacts = _analyzer().nlp_engine.process_text(text, "en")
        exact = [*_emails(text), *self._student_ids(text),
                 *(Found(s, e, "phone") for s, e in phones(text, self._regions))]
        # A street is read with what was found exactly blanked out, so one that follows a
        # phone number ("555-0102, 12 Elm Street") is not read as starting on its digits.
        blanked = list(text)
        for f in exact:
            blanked[f.start:f.end] = " " * (f.end - f.start)
        found = [*exact, *(Found(s, e, "address")
                           for s, e in addresses("".join(blanked), artifacts.tokens)),
                 *_persons(text, artifacts)]
        found += [Found(s, e, "name") for s, e in pii_rules.cued_names(text)
                  if not any(c.isdigit() for c in text[s:e])]
        found += [Found(m.start(), m.end(), "name") for m in self._names.finditer(text)]
        kept = [(m.start(), m.end()) for m in self._keep.finditer(text)]
        found = [f for f in found if not any(f.start < e and s < f.end for s, e in kept)]
        return _resolved(found)

    def find_arguments(self, arguments: str) -> list[Found]:
        """What `find` finds in a tool call's arguments (a JSON string), read one string
        value at a time, with a value under a key that names a person taken as a name (an
        address, phone or student-id key, as its kind) whatever it looks like. Text that is
        not a JSON object is read as text."""
        try:
            json.loads(arguments)
        except ValueError:
            return self.find(arguments)
        found: list[Found] = []
        for m in _JSON_STRING_VALUE.finditer(arguments):
            key, start, end = m.group("key"), m.start("value"), m.end("value")
            raw = arguments[start:end]
            value = json.loads(f'"{raw}"')
            whole = _kind_of_key(key) if value.strip() else None
            if whole is not None and not self._keep.fullmatch(value.strip()):
                found.append(Found(start, end, whole))
                continue
            inner = self.find(value)
            if pii_rules.THING_KEY.search(key):  # a machine's or a room's name is no person's
                inner = [f for f in inner if f.kind != "name"]
            if len(value) == len(raw):
                found += [Found(start + f.start, start + f.end, f.kind) for f in inner]
            elif inner:  # escapes shift the offsets: the whole value goes
                found.append(Found(start, end, inner[0].kind))
        return _resolved(found)

    def _student_ids(self, text: str) -> list[Found]:
        out = []
        for m in self._student_id.finditer(text):
            group = "id" if "id" in self._student_id.groupindex and m.group("id") else 0
            out.append(Found(m.start(group), m.end(group), "student_id"))
        return out

    def scrub(self, text: str, counts: Counter[str]) -> str:
        """The text with every piece of personal data replaced by its kind's placeholder,
        each replacement counted by kind."""
        found = self.find(text)
        if not found:
            return text
        from presidio_anonymizer.entities import OperatorConfig, RecognizerResult

        results = [RecognizerResult(f.kind, f.start, f.end, 1.0) for f in found]
        operators = {k: OperatorConfig("replace", {"new_value": v})
                     for k, v in PLACEHOLDERS.items()}
        out = _anonymizer().anonymize(text, results, operators,  # type: ignore[arg-type]
                                      merge_entities_with_spaces=False)
        counts.update(item.entity_type for item in out.items)
        return str(out.text)

    def scrub_arguments(self, arguments: str, counts: Counter[str]) -> str:
        """A tool call's arguments (a JSON string) with personal data replaced, as `scrub`
        does for text; the placeholders keep the JSON valid."""
        found = self.find_arguments(arguments)
        out = arguments
        for f in sorted(found, key=lambda f: -f.start):
            out = out[:f.start] + PLACEHOLDERS[f.kind] + out[f.end:]
        counts.update(f.kind for f in found)
        return out


# A JSON object's "key": "string value" pairs (at any depth), the value's raw characters.
_JSON_STRING_VALUE = re.compile(r'"(?P<key>(?:[^"\\]|\\.)*)"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)"')


def _kind_of_key(key: str) -> str | None:
    """The kind every value under this argument key is, whatever it looks like, or None."""
    if pii_rules.STUDENT_ID_KEY.search(key):
        return "student_id"
    if pii_rules.ADDRESS_KEY.search(key) and "email" not in key.lower():
        return "address"
    if re.search(r"(?i)(?:^|_)(?:phone|mobile|tel|telephone)(?:_|$)", key):
        return "phone"
    if re.search(r"(?i)(?:^|_)e?-?mail(?:_|$)", key):
        return "email"
    if pii_rules.NAME_KEY.search(key) and not pii_rules.NOT_A_PERSON_KEY.search(key):
        return "name"
    return None


def _phrases(words: Iterable[str]) -> re.Pattern[str]:
    """One pattern for whole-word phrases, longest first; a pattern that matches nothing
    when there are none."""
    ordered = sorted({w.strip() for w in words if w.strip()}, key=lambda w: (-len(w), w))
    if not ordered:
        return re.compile(r"(?!)")
    return re.compile(r"(?<!\w)(" + "|".join(map(re.escape, ordered)) + r")(?!\w)",
                      re.IGNORECASE)


# Which detector wins where two overlap: the exact ones (an e-mail, a number the phone plan
# accepts) over the guessing ones, so a street rule that starts on a phone number's digits
# ("555-0102 when ticket 5 is") gives way to the number, and a street named like a person
# ("221B Baker Street") stays an address.
_PRIORITY = {"email": 0, "student_id": 1, "phone": 2, "address": 3, "name": 4}


def _resolved(found: list[Found]) -> list[Found]:
    out: list[Found] = []
    for f in sorted(found, key=lambda f: (_PRIORITY[f.kind], -(f.end - f.start), f.start)):
        if not any(f.start < o.end and o.start < f.end for o in out):
            out.append(f)
    return sorted(out, key=lambda f: f.start)


def _emails(text: str) -> list[Found]:
    return [Found(m.start(), m.end(), "email") for m in EMAIL.finditer(text)]


def _persons(text: str, artifacts: NlpArtifacts) -> list[Found]:
    """Presidio's PERSON entities, each widened to the whole proper name it is part of, and
    the proper names the parse shows a sentence giving as someone's name."""
    doc: Doc = artifacts.tokens
    results = _analyzer().analyze(text, language="en", entities=["PERSON"],
                               score_threshold=_PERSON_SCORE, nlp_artifacts=artifacts)
    spans = [_whole_name(doc, r.start, r.end) for r in results]
    spans += [_group(token) for token in doc if _given_as_a_name(token)]
    # A greeting before a name is not part of it ("Hola Pedro"), nor a name on its own
    # ("Xin chào").
    spans = [(pii_rules.after_greeting(text, start, end), end) for start, end in spans]
    # A person's name has no digit, and begins with a capital: the small English model's
    # lower-case or numbered PERSON spans are words ("mm", "resin cartridge RS-F2-...",
    # "dritten Jahr" in a German sentence).
    return [Found(start, end, "name") for start, end in spans
            if end > start and not any(c.isdigit() for c in text[start:end])
            and text[start].isupper()]


def _proper(token: Token) -> bool:
    return token.tag_ in ("NNP", "NNPS") and token.text[:1].isupper()


def _group(token: Token) -> tuple[int, int]:
    """The characters of a proper name: the token and the proper nouns compounded with it
    ("Ana" + "Souza", "Grace" + "O'Connor"; hyphens inside, as "Washington-Reid")."""
    parts = [token]
    while True:
        more = [c for c in parts[0].lefts if c.dep_ in ("compound", "flat") and _proper(c)
                and c.i == parts[0].i - 1 or (c.dep_ == "punct" and c.text == "-"
                                              and c.i == parts[0].i - 1)]
        if not more:
            break
        parts.insert(0, more[0])
    while parts[0].text == "-":
        parts.pop(0)
    return parts[0].idx, token.idx + len(token.text)


def _whole_name(doc: Doc, start: int, end: int) -> tuple[int, int]:
    """An entity's span widened to the proper name its last token heads."""
    inside = [t for t in doc if start <= t.idx < end]
    if not inside:
        return start, end
    last = inside[-1]
    while last.dep_ in ("compound", "flat") and _proper(last.head) and last.head.i > last.i:
        last = last.head
    first, _ = _group(last)
    return min(start, first), max(end, last.idx + len(last.text))


# Where a sentence gives a proper name as someone's: "I'm X", "this is X", "my name is X",
# "it's X" (the attribute of "be" with such a subject), "called X", "named X", "call me X",
# "the name X".
_NAMING_SUBJECTS = {"i", "this", "it", "name", "names"}


def _given_as_a_name(token: Token) -> bool:
    if not _proper(token) or token.dep_ in ("compound", "flat"):
        return False
    head = token.head
    if token.dep_ == "attr" and head.lemma_ == "be":
        return any(c.dep_ == "nsubj" and c.lower_ in _NAMING_SUBJECTS for c in head.children)
    if token.dep_ in ("oprd", "dobj", "npadvmod") and head.lemma_ in ("call", "name"):
        return head.lemma_ != "call" or token.dep_ == "oprd" or any(
            c.lower_ == "me" for c in head.children)
    return token.dep_ == "appos" and head.lemma_ == "name"


@cache
def _analyzer() -> AnalyzerEngine:
    """Presidio's analyzer with only its spaCy recogniser, on the pinned pipeline."""
    # Imported here: Presidio and spaCy take about 2 s to import and the pipeline 0.3 s to
    # load, paid only by from-conversations and the PII bench.
    import spacy
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    root = verified_pipeline()

    class PinnedEngine(SpacyNlpEngine):  # type: ignore[misc]
        """Presidio's spaCy engine on the verified local pipeline: Presidio's own load()
        would download a model it does not find installed under its name."""

        def load(self) -> None:
            self.nlp = {"en": spacy.load(root)}  # type: ignore[assignment]

    engine = PinnedEngine(models=[{"lang_code": "en", "model_name": str(root)}])
    engine.load()
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.add_recognizer(SpacyRecognizer(supported_language="en",
                                            supported_entities=["PERSON"]))
    return AnalyzerEngine(nlp_engine=engine, registry=registry, supported_languages=["en"])


@cache
def _anonymizer() -> AnonymizerEngine:
    from presidio_anonymizer import AnonymizerEngine

    return AnonymizerEngine()


def catalogue_phrases() -> list[str]:
    """What must survive in any conversation: every catalogue machine's name, brand and
    aliases (the fuller lab catalogue holds the demo's two)."""
    from evals.fixtures.catalog import fixtures_for

    return [w for m in fixtures_for("lab").machines for w in (m.name, m.brand, *m.aliases)]
