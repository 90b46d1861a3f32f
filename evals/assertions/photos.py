"""Photos: what identify_tools recorded, and which machine the answer says is pictured."""

from __future__ import annotations

import re
from typing import Any

from pydantic import field_validator

from evals.assertions._registry import Args, Verdict, assertion
from evals.assertions._text import DENIAL, fold, machine_mentions, sentences
from evals.record import Fixtures, RecordedTurn

_QTY = re.compile(r"^(.*?)\s+x(\d+)$", re.IGNORECASE)
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _last_items(turn: RecordedTurn) -> list[dict[str, Any]] | None:
    calls = turn.calls("identify_tools")
    if not calls:
        return None
    items = calls[-1]["arguments"].get("items") if isinstance(calls[-1]["arguments"],
                                                                dict) else None
    return items if isinstance(items, list) else []


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
    text = fold(f"{item.get('brand', '')} {item.get('name', '')}")
    quantity = item.get("quantity", 1)
    enough = isinstance(quantity, int) and quantity >= qty
    return enough and any(alt.strip().lower() in text for alt in words.split("|"))


def _assign(entries: list[str], items: list[dict[str, Any]], used: frozenset[int]) -> bool:
    """Each entry matched by a different item (small sizes: plain backtracking)."""
    if not entries:
        return True
    return any(
        i not in used and _matches(entries[0], item) and _assign(entries[1:], items, used | {i})
        for i, item in enumerate(items)
    )


@assertion("identified_items", args=ItemsArg)
def identified_items(turn: RecordedTurn, args: ItemsArg, fixtures: Fixtures) -> Verdict:
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


@assertion("identified_count", args=CountArg)
def identified_count(turn: RecordedTurn, args: CountArg, fixtures: Fixtures) -> Verdict:
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
    r"\?|\b(can'?t tell|cannot tell|not sure|hard to tell|can'?t be sure|could be|either|"
    r"might be|may be|unclear|which one|check the label)\b", re.IGNORECASE)
_CLAIM = re.compile(r"\b(this is|that'?s|it'?s|it is|looks like|appears to be|shows|pictured)\b",
                    re.IGNORECASE)


@assertion("identified_tool", args=ToolIdArg)
def identified_tool(turn: RecordedTurn, args: ToolIdArg, fixtures: Fixtures) -> Verdict:
    mentions = machine_mentions(turn.answer, fixtures)
    if args.value == "none":
        for sentence in sentences(turn.answer):
            named = machine_mentions(sentence, fixtures)
            if named and _CLAIM.search(sentence) and not DENIAL.search(sentence):
                return False, f"claims a catalogue machine is pictured: “{sentence}”"
        if not DENIAL.search(turn.answer):
            return False, "does not say the lab lacks the pictured machine"
        return True, "names no catalogue machine as pictured and says the lab lacks it"
    slug, _, ask = args.value.partition("|")
    if slug not in fixtures.slugs:
        return False, f"{slug!r} is not in this case's catalogue"
    if mentions and mentions[0].slug == slug:
        return True, f"first names {mentions[0].name}"
    if ask and _UNSURE.search(turn.answer) and any(m.slug == slug for m in mentions):
        return True, f"asks or is unsure, with {slug} among the candidates"
    first = mentions[0].name if mentions else "no catalogue machine"
    return False, f"first names {first}, expected {args.value}"
