"""Cases from stored conversations (`python -m evals from-conversations`), with no model:
the same records always give the same cases.

Only conversations whose person recorded consent (`research_consent`, set through
/api/consent) are read. Turns are sorted into kinds, in a fixed order (a turn where a tool
failed, a turn where the person corrects the assistant, a turn that asked for a machine the
lab lacks, a turn with a photo, a staff action), and picked one kind at a time and, within a
kind, one person at a time, so neither a kind nor a talkative person crowds out the rest.
Each case keeps the conversation's earlier turns as `history` (the last 11 messages, each cut
to 4,000 characters) and the turn's page and audience as its context; its checks and rubric
come from the kind, never from the person's words. Text that looks like an email address or
a phone number is replaced with a placeholder, and counted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from app.capabilities import REGISTRY
from app.db import Database

HISTORY_MESSAGES = 11
MESSAGE_CHARS = 4000
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w/])(\+?\d[\d ()./-]{7,}\d)(?![\w/])")
CORRECTION = re.compile(r"^\s*(no\b|nope\b|wrong\b|that'?s (not|wrong)|that is (not|wrong)"
                        r"|not what i|actually\b|incorrect\b|you said\b|you('re| are) wrong)",
                        re.IGNORECASE)
_ATTACHMENT = re.compile(r"attachment_id=([0-9a-f-]{36})")

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


class NoConversations(LookupError):
    """Nothing to make cases from; the message says why."""


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


@dataclass
class Made:
    cases: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    photos: dict[str, bytes] = field(default_factory=dict)  # file name -> bytes
    scrubbed: Counter[str] = field(default_factory=Counter)  # email / phone -> count
    left_out: list[str] = field(default_factory=list)


def scrub(text: str, counts: Counter[str]) -> str:
    def email(_: re.Match[str]) -> str:
        counts["email"] += 1
        return "[email]"

    def phone(_: re.Match[str]) -> str:
        counts["phone"] += 1
        return "[phone]"

    return PHONE.sub(phone, EMAIL.sub(email, text))


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


async def load(db: Database, since: dt.datetime | None) -> tuple[list[StoredTurn],
                                                                  list[str]]:
    """The consented conversations' turns, oldest first, and what was left out and why."""
    rows = await db.fetch(
        "SELECT t.id, t.conversation_id, c.user_ref, t.created_at, t.messages, t.answer,"
        " t.tool_calls, t.page_path, t.audience, coalesce(r.consent, false) AS consent"
        " FROM turns t JOIN conversations c ON c.id = t.conversation_id"
        " LEFT JOIN research_consent r ON r.user_ref = c.user_ref"
        " WHERE %s::timestamptz IS NULL OR t.created_at >= %s::timestamptz"
        " ORDER BY t.created_at, t.id", (since, since))
    if not rows:
        raise NoConversations("no stored conversations" + (f" since {since:%Y-%m-%d}"
                                                          if since else ""))
    kept = [r for r in rows if r["consent"]]
    refused = {r["conversation_id"] for r in rows if not r["consent"]}
    left = [f"{len(refused)} conversation(s) whose person has not consented"] if refused else []
    if not kept:
        raise NoConversations(f"no stored conversation has its person's consent ({len(refused)}"
                              " without it); a person gives it through /api/consent")
    turns = []
    for r in kept:
        messages = r["messages"] if isinstance(r["messages"], dict) else {}
        text = json.dumps(messages.get("all", []))
        turns.append(StoredTurn(r["id"], str(r["conversation_id"]), r["user_ref"],
                                r["created_at"], str(messages.get("user", "")), r["answer"],
                                list(r["tool_calls"] or []), r["page_path"], r["audience"],
                                sorted(set(_ATTACHMENT.findall(text)))))
    return turns, left


def pick(turns: list[StoredTurn], count: int) -> list[tuple[str, StoredTurn]]:
    """Up to `count` (kind, turn): kinds in turn, and within a kind people in turn (each
    person's turns oldest first), so the same records always give the same picks."""
    by_conversation: dict[str, list[StoredTurn]] = defaultdict(list)
    for t in turns:
        by_conversation[t.conversation].append(t)
    queues: dict[str, dict[str, list[StoredTurn]]] = {k: defaultdict(list) for k in KINDS}
    for t in turns:
        earlier = [e for e in by_conversation[t.conversation] if e.id < t.id]
        for kind in kinds_of(t, earlier):
            queues[kind][t.person].append(t)
    picked: list[tuple[str, StoredTurn]] = []
    used: set[int] = set()
    served: dict[str, int] = {k: 0 for k in KINDS}  # per kind: the next person's position
    while len(picked) < count:
        progress = False
        for kind in KINDS:
            if len(picked) >= count:
                break
            people = [p for p in queues[kind] if any(t.id not in used
                                                     for t in queues[kind][p])]
            if not people:
                continue
            person = people[served[kind] % len(people)]
            served[kind] += 1
            turn = next(t for t in queues[kind][person] if t.id not in used)
            used.add(turn.id)
            picked.append((kind, turn))
            progress = True
        if not progress:
            break
    return picked


def history(turn: StoredTurn, conversation: list[StoredTurn], counts: Counter[str]
            ) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    for t in conversation:
        if t.id >= turn.id:
            break
        messages += [{"user": t.user}, {"assistant": t.answer}]
    return [{role: scrub(text[:MESSAGE_CHARS], counts) for role, text in m.items()}
            for m in messages[-HISTORY_MESSAGES:] if next(iter(m.values())).strip()]


def context_of(turn: StoredTurn) -> dict[str, Any]:
    context: dict[str, Any] = {}
    path = turn.page_path or "/"
    parts = path.strip("/").split("/")
    if len(parts) >= 2 and parts[0] == "tools":
        context.update(page="tool", toolId=parts[1])
        if len(parts) == 3 and parts[2] == "curate":
            context["curate"] = True
    elif path != "/":
        context["path"] = path
    if turn.audience in ("student", "staff", "super_admin"):
        context["as"] = turn.audience
    return context


async def make_cases(db: Database, count: int, since: dt.datetime | None = None) -> Made:
    turns, left = await load(db, since)
    made = Made(left_out=left)
    conversations: dict[str, list[StoredTurn]] = defaultdict(list)
    for t in turns:
        conversations[t.conversation].append(t)
    picks = pick(turns, count)
    found = Counter(kind for kind, _ in picks)
    for kind in KINDS:
        if not found[kind]:
            made.left_out.append(f"kind {kind}: none in the consented conversations"
                                 f" ({KINDS[kind][0]})")
    for n, (kind, turn) in enumerate(picks, start=1):
        case: dict[str, Any] = {"id": f"conversation-{kind}-{n}",
                                "prompt": scrub(turn.user[:MESSAGE_CHARS], made.scrubbed)}
        context = context_of(turn)
        if context:
            case["context"] = context
        past = history(turn, conversations[turn.conversation], made.scrubbed)
        if past:
            case["history"] = past
        if kind == "photo":
            rows = await db.fetch("SELECT id, name, data FROM attachments WHERE id = ANY(%s)",
                                  (turn.attachments,))
            if not rows:
                made.left_out.append(f"case {n} ({kind}): its photo is no longer stored")
                continue
            names = [f"conversation-{n}-{i}.jpg" for i in range(len(rows))]
            made.photos.update({name: bytes(r["data"]) for name, r in zip(names, rows,
                                                                           strict=True)})
            case["photos"] = names
        checks = KINDS[kind][1]
        case.update({k: v for k, v in checks.items() if k != "assert"})
        if "assert" in checks:
            case["assert"] = checks["assert"]
        if kind == "staff-action":
            action = next(str(c["name"]) for c in turn.tool_calls
                          if getattr(REGISTRY.all_tools().get(str(c.get("name"))), "kind",
                                     None) == "action")
            case["assert"] = [{"kind": "proposed_action", "value": action}]
        made.cases.append((kind, case))
    return made
