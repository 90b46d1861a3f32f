"""Photos: what identify_tools recorded, and which machine the answer says is pictured."""

from __future__ import annotations

import re
from typing import Any

from pydantic import field_validator

from evals.checks._registry import Args, Verdict, assertion
from evals.checks._text import (
    RULED_OUT,
    Mention,
    clause_at,
    denied,
    has_phrase,
    linked_slugs,
    machine_mentions,
    plain,
    says_lab_lacks,
    sentences,
    spans_of,
)
from evals.fixtures.catalog import EQUIPMENT_LEXICON, Fixtures, names_of
from evals.record.transcript import Transcript

_QTY = re.compile(r"^(.*?)\s+x(\d+)$", re.IGNORECASE)
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _last_items(turn: Transcript) -> list[dict[str, Any]] | None:
    """The items of the last identify_tools call that ran (None: no call ran)."""
    calls = turn.ran("identify_tools")
    if not calls:
        return None
    items = calls[-1].args.get("items")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


class ItemsArg(Args):
    value: list[str]

    @field_validator("value")
    @classmethod
    def _entries(cls, v: list[str]) -> list[str]:
        if not v or any(not e.strip() for e in v):
            raise ValueError("give at least one item, alternatives joined by |")
        return v


def _matches(entry: str, item: dict[str, Any]) -> bool:
    m = _QTY.match(entry.strip())
    words, qty = (m.group(1), int(m.group(2))) if m else (entry, 1)
    text = plain(f"{item.get('brand') or ''} {item.get('name') or ''}")
    quantity = item.get("quantity", 1)
    enough = isinstance(quantity, int) and quantity >= qty
    return enough and any(has_phrase(text, alt) for alt in words.split("|") if alt.strip())


def _assign(entries: list[str], items: list[dict[str, Any]], used: frozenset[int]) -> bool:
    """Each entry matched by a different item (small sizes: plain backtracking)."""
    if not entries:
        return True
    return any(
        i not in used and _matches(entries[0], item) and _assign(entries[1:], items, used | {i})
        for i, item in enumerate(items)
    )


@assertion("identified_items", args=ItemsArg, reads_answer=False, needs=frozenset({"tool_calls"}))
def identified_items(turn: Transcript, args: ItemsArg, fixtures: Fixtures) -> Verdict:
    items = _last_items(turn)
    if items is None:
        return False, "identify_tools was never called"
    if _assign(args.value, items, frozenset()):
        return True, f"identified {args.value}"
    shown = [f"{i.get('brand', '')} {i.get('name', '')} x{i.get('quantity', 1)}".strip()
             for i in items]
    return False, f"recorded {shown}, which does not cover {args.value} one item each"


class CountArg(Args):
    value: str

    @field_validator("value")
    @classmethod
    def _range(cls, v: str) -> str:
        m = _RANGE.match(v.strip())
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise ValueError("give a count like '3' or a range like '3-4'")
        return v.strip()


@assertion("identified_count", args=CountArg, reads_answer=False, needs=frozenset({"tool_calls"}))
def identified_count(turn: Transcript, args: CountArg, fixtures: Fixtures) -> Verdict:
    items = _last_items(turn)
    if items is None:
        return False, "identify_tools was never called"
    m = _RANGE.match(args.value)
    assert m is not None
    low, high = int(m.group(1)), int(m.group(2) or m.group(1))
    if low <= len(items) <= high:
        return True, f"recorded {len(items)} item(s)"
    return False, f"recorded {len(items)} item(s), expected {args.value}"


class ToolIdArg(Args):
    value: str

    @field_validator("value")
    @classmethod
    def _form(cls, v: str) -> str:
        if not re.match(r"^(none|[a-z0-9-]+(\|ask)?)$", v):
            raise ValueError("give a slug, 'slug|ask', or 'none'")
        return v


_UNSURE = re.compile(
    r"\?|\b(?:can'?t tell|cannot tell|can not tell|not sure|unsure|hard to tell|difficult to tell|"
    r"can'?t be sure|cannot be sure|can'?t say|not certain|could be either|either the|"
    r"unclear|which one|check the label|can'?t identify|cannot identify|not able to tell)\b",
    re.IGNORECASE)
_CLAIM = re.compile(
    r"\b(?:this is|this one is|that'?s|that is|it'?s|it is|looks like|look like|appears to be|"
    r"seems to be|shows|showing|pictured|in (?:the|your) (?:photo|picture|image)|probably|"
    r"likely|could be|might be|may be|must be|i think|i'd say|identified as|that one is)\b",
    re.IGNORECASE)


def named_machines(answer: str, fixtures: Fixtures) -> list[tuple[Mention, bool, bool, str]]:
    """Every machine the answer names, in order: (mention, ruled out, unsure, sentence). A
    lexicon machine the lab lacks is named with the slug "" (it is no catalogue machine). A
    name in a sentence that asks or says it cannot tell is a candidate, not a claim."""
    out = []
    unknown = [t for t in EQUIPMENT_LEXICON
               if not any(has_phrase(n, t) or t.lower() == m.brand.lower()
                          for m in fixtures.machines for n in names_of(m))]
    for sentence in sentences(answer):
        question = sentence.rstrip().endswith("?")
        found = machine_mentions(sentence, fixtures)
        taken = [(m.start, m.end) for m in found]
        for term in sorted(unknown, key=len, reverse=True):
            for start, end in spans_of(sentence, term):
                if not any(s < end and start < e for s, e in taken):
                    taken.append((start, end))
                    found.append(Mention(start, end, "", sentence[start:end]))
        for label, slug in linked_slugs(sentence):
            if slug in fixtures.slugs and not any(m.slug == slug for m in found):
                at = sentence.find(label) if label else 0
                found.append(Mention(max(at, 0), max(at, 0) + len(label), slug, label or slug))
        for m in sorted(found, key=lambda x: x.start):
            ruled_out = denied(sentence, m.start, m.end, fixtures, RULED_OUT)
            start, end = clause_at(sentence, m.start)
            unsure = question or bool(_UNSURE.search(sentence[start:end]))
            out.append((m, ruled_out, unsure, sentence))
    return out


@assertion("identified_tool", args=ToolIdArg, reads="en")
def identified_tool(turn: Transcript, args: ToolIdArg, fixtures: Fixtures) -> Verdict:
    """Reads the answer to the message that carried the photos: in a conversation that is
    where the assistant first says what it sees; what it does after (asking, being told) is
    for the scenario's criteria."""
    answer = turn.photo_answer()
    named = named_machines(answer, fixtures)
    if args.value == "none":
        for mention, ruled_out, _, sentence in named:
            start, end = clause_at(sentence, mention.start)
            if mention.slug and not ruled_out and _CLAIM.search(sentence[start:end]):
                return False, f"claims {mention.name} is pictured: “{sentence}”"
        if not says_lab_lacks(answer):
            return False, "does not say the lab lacks the pictured machine"
        return True, "names no catalogue machine as pictured and says the lab lacks it"
    slug, _, ask = args.value.partition("|")
    if slug not in fixtures.slugs:
        return False, f"{slug!r} is not in this case's catalogue"
    kept = [(m, unsure) for m, ruled_out, unsure, _ in named if not ruled_out]
    claims = [m for m, unsure in kept if not unsure]
    first = kept[0][0] if kept else None
    if first is not None and claims and claims[0] is first and first.slug == slug:
        return True, f"says it is {first.name}"
    unsure_answer = any(unsure for _, unsure in kept) or _UNSURE.search(plain(answer))
    if ask and unsure_answer and any(m.slug == slug for m, _ in kept):
        return True, f"asks or is unsure, with {slug} among the candidates"
    if first is None:
        return False, f"names no machine as pictured; expected {args.value}"
    what = "names" if first.slug else "names a machine the lab lacks,"
    hedge = " without saying it is pictured" if claims[:1] != [first] else ""
    return False, f"{what} {first.name} first{hedge}; expected {args.value}"
