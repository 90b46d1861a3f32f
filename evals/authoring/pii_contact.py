"""Contact details in conversation text, as spans: phone numbers (Google's libphonenumber,
read as the configured regions) and street addresses (pyap's US and British rules, and the
street forms of pii_rules.py for elsewhere). evals/authoring/pii.py types them, with the
names, e-mails and student ids it finds, and replaces them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from evals.authoring import pii_rules

if TYPE_CHECKING:
    from spacy.tokens import Doc


def phones(text: str, regions: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """Where the text gives a phone number, read as the first region's (possible there)
    and then as the visitors' regions' (valid there, written as there)."""
    import phonenumbers

    out = []
    for i, (region, leniency) in enumerate(regions):
        for m in phonenumbers.PhoneNumberMatcher(
                text, region, leniency=getattr(phonenumbers.Leniency, leniency)):
            valid = phonenumbers.is_valid_number(m.number)
            if (_a_number(m.raw_string, valid) if i == 0
                    else _written_as_there(m.raw_string, m.number)):
                out.append((m.start, m.end))
    return out


def _written_as_there(raw: str, number: Any) -> bool:
    """A number read as a visitor's region's counts when it has its country code, is
    written in the digit groups that region writes it in, with or without its national
    prefix ("06 12 34 56 78", "0412 345 678", "98765 43210"), or in groups that end on the
    longest: an order or part number that happens to be valid somewhere ("4471-2093-55") is
    not."""
    import phonenumbers

    if raw.lstrip().startswith("+"):
        return True
    national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    groups = [len(g) for g in re.findall(r"\d+", national)]
    written = [len(g) for g in re.findall(r"\d+", raw)]
    digits = "".join(re.findall(r"\d+", national))
    prefix = len(digits) - len(str(number.national_number))
    shorter = [groups[0] - prefix, *groups[1:]] if groups and prefix > 0 else groups
    if written in (groups, shorter, [sum(groups)], [sum(groups) - prefix]):
        return True
    # People group their numbers their own way too ("04 1234 5678"), but a phone's groups
    # end on the longest one, where a code's often end short ("4471-2093-55").
    return len(written) > 1 and written[-1] >= max(written)


# The digit groups a North American number is written in when the plan cannot vouch for it:
# 555 867 5309, (555) 867-5309, 1-555-867-5309, 5558675309.
_NANP_GROUPS = ([3, 3, 4], [1, 3, 3, 4], [10], [11], [3, 7])


def _a_number(raw: str, valid: bool) -> bool:
    """A number the plan accepts, or one with its country code, is taken as written; one it
    does not (555 and made-up numbers) only in a phone number's own grouping, so an order
    number ("4471-2093-55") or a seven-digit part ("5566-778") stays."""
    if valid or raw.lstrip().startswith("+"):
        return True
    return [len(g) for g in re.findall(r"\d+", raw)] in _NANP_GROUPS


@cache
def _address_rules() -> tuple[Any, ...]:
    from pyap import parser

    us, gb = parser.AddressParser("US"), parser.AddressParser("GB")
    # Britain's rules for a street alone match almost any words before a number: only its
    # full addresses (with a postcode) are used.
    return us.rules, us.single_street_rules, gb.rules


def addresses(text: str, doc: Doc) -> list[tuple[int, int]]:
    """Where the text gives a street address: pyap's US and British rules, a street abroad
    as Europe and Asia write it, each with the town the parse names right after it."""
    from pyap import utils

    # pyap reads dashes as "-": translated one for one, so offsets hold.
    plain = text.translate({ord(c): "-" for c in "‐‑‒–—―"})
    full_us, street_us, full_gb = _address_rules()
    found = [m for rules in (full_us, full_gb) for m in utils.finditer(rules, plain)]
    # The sentence's own punctuation after a street is not part of it ("12 Elm Street."); a
    # town the parse names right after it, is ("8 Maple Rd, Springfield").
    ends = [(m.start(), m.start() + len(m.group(0).rstrip(" .,;:!?\n"))) for m in found]
    # A street on its own ends at its first street type: pyap's rule runs on to the last word
    # it can read as one ("12 Elm Street if the Form 4 print is").
    for m in utils.finditer(street_us, plain):
        if _a_street(m.groupdict()):
            first = _STREET_TYPE.search(plain, m.start(), m.end())
            end = first.end() if first else m.start() + len(m.group(0).rstrip(" .,;:!?\n"))
            # what pyap reads after the type stays: a direction, a flat or suite number
            end = max([end, *(m.end(k) for k, v in m.groupdict().items() if v and k.startswith(
                ("post_direction", "occupancy", "floor", "building")))])
            ends.append((m.start(), end))
    towns = {e.start_char: e.end_char for e in doc.ents if e.label_ == "GPE"}
    for m in pii_rules.STREET_ABROAD.finditer(text):
        end = m.end()
        town = pii_rules.POSTCODE_TOWN.match(text, end)
        ends.append((m.start(), town.end() if town else end))
    out = []
    for start, end in ends:
        after = end + len(text[end:]) - len(text[end:].lstrip(", "))
        if text[end:after].strip() == "," and after in towns:
            end = towns[after]
        if end > start:
            out.append((start, end))
    return out


_STREET_TYPE = re.compile(
    r"\b(?:Street|St|Avenue|Ave|Road|Rd|Drive|Dr|Lane|Ln|Boulevard|Blvd|Court|Ct|Place|Pl"
    r"|Way|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Cres|Square|Sq"
    r"|Trail|Row|Walk)\b")


def _a_street(parts: dict[str, str | None]) -> bool:
    """A street on its own (no town or postcode to confirm it) only with a street type and a
    name written as one ("12 Elm Street", "350 5th Ave"): pyap's rules alone also take
    "2 mm layer height is" (a type "is") and "60 W tube"."""
    kinds = [v for k, v in parts.items() if k.startswith("street_type") and v]
    names = [v.strip() for k, v in parts.items() if k.startswith("street_name") and v]
    return bool(kinds and names) and (names[0][0].isupper() or names[0][0].isdigit())
