"""Which consented turns become which cases (`python -m evals from-conversations`): a turn's
kinds, read from the turn and the ones before it, each with the checks a case of it gets; the
picking, one kind at a time and within a kind one person at a time, so neither a kind nor a
talkative person crowds out the rest; and the turns asked for by id, flagged by online
evaluation, with the online checks that failed on them."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.capabilities import REGISTRY
from app.catalog.records import SPEC_FIELDS

CORRECTION = re.compile(r"^\s*(no\b|nope\b|wrong\b|that'?s (not|wrong)|that is (not|wrong)"
                        r"|not what i|actually\b|incorrect\b|you said\b|you('re| are) wrong)",
                        re.IGNORECASE)
# Kind -> (what it is, the checks a case of it gets). Checks never quote the person.
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "tool-error": ("a turn where a tool call failed", {
        "assert": [{"kind": "no_unknown_tools"}],
        "rubric": "Uses its tools correctly, and when a tool fails says so plainly instead of"
                  " inventing what the tool would have returned."}),
    "correction": ("a turn where the person corrects the assistant", {
        "rubric": "Takes the person's correction into account and answers again from the"
                  " record, without repeating the mistake it was corrected on.",
        "must_not": "Insist on its earlier answer without checking it."}),
    "missing-machine": ("a turn that asked for a machine the lab does not have", {
        "assert": [{"kind": "no_unknown_tools"}],
        "rubric": "Says plainly that the lab does not have that machine, and offers a machine"
                  " the lab has only if it fits the need."}),
    "photo": ("a turn with a photo", {
        "rubric": "Says which catalogue machine is in the photo only when it can tell, and"
                  " asks when look-alikes leave it open; names no machine the lab lacks."}),
    "staff-action": ("a staff action", {
        "rubric": "Proposes the change on a card for a person to confirm, and does not say it"
                  " is done before it is confirmed."}),
}



@dataclass
class StoredTurn:
    id: int
    conversation: str
    person: str
    at: dt.datetime
    user: str
    answer: str
    tool_calls: list[dict[str, Any]]
    page_path: str | None
    audience: str | None
    attachments: list[str]



def kinds_of(turn: StoredTurn, earlier: list[StoredTurn]) -> list[str]:
    tools = REGISTRY.all_tools()
    calls = turn.tool_calls
    kinds = []
    if any(c.get("outcome", "ok") != "ok" for c in calls):
        kinds.append("tool-error")
    if earlier and CORRECTION.match(turn.user):
        kinds.append("correction")
    if any(c.get("name") == "search_catalog" and isinstance(c.get("result"), dict)
           and c["result"].get("machines") == [] for c in calls):
        kinds.append("missing-machine")
    if turn.attachments:
        kinds.append("photo")
    if turn.audience in ("staff", "super_admin") and any(
            getattr(tools.get(str(c.get("name"))), "kind", None) == "action" for c in calls):
        kinds.append("staff-action")
    return kinds



def queues(turns: list[StoredTurn], eligible: set[int]
           ) -> dict[str, dict[str, list[StoredTurn]]]:
    """Per kind, per person (in order of their first such turn), their turns oldest first."""
    by_conversation: dict[str, list[StoredTurn]] = defaultdict(list)
    for t in turns:
        by_conversation[t.conversation].append(t)
    out: dict[str, dict[str, list[StoredTurn]]] = {k: {} for k in KINDS}
    for t in turns:
        if t.id not in eligible:
            continue
        earlier = [e for e in by_conversation[t.conversation] if e.id < t.id]
        for kind in kinds_of(t, earlier):
            out[kind].setdefault(t.person, []).append(t)
    return out


def pick(queued: dict[str, dict[str, list[StoredTurn]]], count: int
         ) -> list[tuple[str, StoredTurn]]:
    """Up to `count` (kind, turn): kinds in turn and, within a kind, people in a fixed
    order, each taking one turn per round, so the same records always give the same picks
    and neither a kind nor a talkative person crowds out the rest."""
    picked: list[tuple[str, StoredTurn]] = []
    used: set[int] = set()
    rounds: dict[str, list[tuple[str, StoredTurn]]] = {}
    for kind, people in queued.items():  # a kind's order: person 1, 2, 3, then 1, 2, ...
        order = []
        depth = max((len(ts) for ts in people.values()), default=0)
        for i in range(depth):
            order += [(p, ts[i]) for p, ts in people.items() if i < len(ts)]
        rounds[kind] = order
    position = {k: 0 for k in KINDS}
    while len(picked) < count:
        progress = False
        for kind in KINDS:
            if len(picked) >= count:
                break
            order = rounds[kind]
            while position[kind] < len(order) and order[position[kind]][1].id in used:
                position[kind] += 1  # a turn of two kinds is taken once
            if position[kind] >= len(order):
                continue
            turn = order[position[kind]][1]
            position[kind] += 1
            used.add(turn.id)
            picked.append((kind, turn))
            progress = True
        if not progress:
            break
    return picked



def flagged_checks(kinds: Sequence[str]) -> dict[str, Any]:
    """A flagged turn's case checks: the online checks that failed on it (evals/report/
    online.py), each as a case file writes it; a spec check over every spec field."""
    out = []
    for kind in kinds:
        out.append({"kind": kind, "fields": list(SPEC_FIELDS)} if kind == "no_fabricated_specs"
                   else {"kind": kind})
    return {"assert": out}


def picked_turns(turns: list[StoredTurn], eligible: set[int], flagged: dict[int, list[str]]
                 ) -> tuple[list[tuple[str, StoredTurn]], list[str]]:
    """The turns asked for by id (a flagged turn of online evaluation), in the order asked,
    each only if its person consented; and a line for each other, left out."""
    by_id = {t.id: t for t in turns if t.id in eligible}
    picked, left = [], []
    for turn_id in flagged:
        if turn_id in by_id:
            picked.append(("flagged", by_id[turn_id]))
        else:
            left.append(f"turn {turn_id}: no stored turn of a consented conversation has that"
                        " id (in the period asked)")
    return picked, left


