"""Cases from stored conversations (`python -m evals from-conversations`), with no model:
the same records always give the same cases.

Only conversations whose person recorded consent (set through /api/consent; the rule is the
`conversation_consent` view: a signed-in person's decision covers the conversations they held
signed in; an anonymous one needs its own session's yes) are read. Turns are sorted into kinds,
in a fixed order (a turn where a tool failed, a turn where the person corrects the assistant, a
turn that asked for a machine the lab lacks, a turn with a photo, a staff action), and picked
one kind at a time and, within a kind, one person at a time, so neither a kind nor a talkative
person crowds out the rest (evals/authoring/picking.py; `--turns` picks turns by id instead).
Each case keeps the conversation's earlier turns as `history` (the
last 11 messages, each cut to 4,000 characters) and the turn's page and audience as its
context; its checks and rubric come from the kind, never from the person's words; the turn's
tool calls are written beside it, for its reviewer, as comments. Personal data (names, phone
numbers, street addresses, e-mail addresses, student ids), in the text and in the tool calls'
arguments, is found by the detectors of evals/authoring/pii.py and replaced with a placeholder
of its kind, counted; what they cannot rule out is said. A case where a name cue is left that
no detector resolved ("my name is …", "je m'appelle …") is held back, never written, and said
with the reason.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from PIL import Image, UnidentifiedImageError

from app.capabilities import REGISTRY
from app.db import Database
from evals.authoring.picking import (
    KINDS,
    StoredTurn,
    flagged_checks,
    pick,
    picked_turns,
    queues,
)
from evals.authoring.pii import BLIND_SPOTS, Detectors, catalogue_phrases
from evals.authoring.pii_rules import unresolved_cues
from evals.fixtures.catalog import fixtures_for
from evals.load.cases import case_errors
from evals.load.context import context_for

HISTORY_MESSAGES = 11
MESSAGE_CHARS = 4000
_HINT = re.compile(r"\[Attached photos: ([^\]]*)\]\s*$")
_ATTACHMENT = re.compile(r"attachment_id=([0-9a-f-]{36})")
PHOTO_WINDOW = dt.timedelta(minutes=15)  # a turn's photos are stored just before it

class NoConversations(LookupError):
    """Nothing to make cases from; the message says why."""


@dataclass
class Made:
    cases: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    photos: dict[str, bytes] = field(default_factory=dict)  # file name -> bytes
    scrubbed: Counter[str] = field(default_factory=Counter)  # name / phone / ... -> count
    left_out: list[str] = field(default_factory=list)
    # case id -> the turn's tool calls, `name {arguments}` with the arguments scrubbed
    calls: dict[str, list[str]] = field(default_factory=dict)
    # the cases not written because a name may be left in them: the turn, and why
    held_back: list[str] = field(default_factory=list)
    # kind -> what the detectors could not rule out in it (said with the counts)
    unsure: dict[str, str] = field(default_factory=lambda: dict(BLIND_SPOTS))


def scrub(text: str, counts: Counter[str], names: Sequence[str] = (),
          keep: Sequence[str] = ()) -> str:
    """The text with personal data replaced by placeholders of its kind ([name], [phone],
    [address], [email]), each counted: what the detectors find, and the names of people in
    the lab's records. The catalogue's machine names (and `keep`) stay."""
    return _detectors(tuple(names), tuple(keep)).scrub(text, counts)


def scrub_calls(calls: list[dict[str, Any]], counts: Counter[str], names: Sequence[str] = (),
                keep: Sequence[str] = ()) -> list[str]:
    """Each tool call as `name {arguments}`, its arguments (the JSON the model sent) with
    personal data replaced as `scrub` replaces it in text, each replacement counted."""
    detectors = _detectors(tuple(names), tuple(keep))
    out = []
    for call in calls:
        arguments = call.get("arguments")
        text = arguments if isinstance(arguments, str) else json.dumps(
            arguments if arguments is not None else {}, ensure_ascii=False, default=str)
        out.append(f"{call.get('name')} {detectors.scrub_arguments(text, counts)}")
    return out


def name_cues_left(case: dict[str, Any], calls: list[str]) -> list[str]:
    """The name cues in a scrubbed case (its prompt, history and tool calls) that no
    placeholder follows, each once."""
    texts = [case["prompt"], *(v for m in case.get("history", []) for v in m.values()),
             *calls]
    return list(dict.fromkeys(cue for text in texts for cue in unresolved_cues(text)))


@lru_cache(maxsize=8)
def _detectors(names: tuple[str, ...], keep: tuple[str, ...]) -> Detectors:
    return Detectors(keep=[*catalogue_phrases(), *keep], names=names)


async def load(db: Database, since: dt.datetime | None) -> tuple[list[StoredTurn], set[int],
                                                                  list[str]]:
    """The consented conversations' turns (whole conversations, oldest first, for their
    history), the ids of those that may become cases (since `since`), and what was left out
    and why."""
    rows = await db.fetch(
        "SELECT t.id, t.conversation_id, c.user_ref, t.created_at, t.messages, t.answer,"
        " t.tool_calls, t.page_path, t.audience, cc.consent"
        " FROM turns t JOIN conversations c ON c.id = t.conversation_id"
        " JOIN conversation_consent cc ON cc.conversation_id = c.id"
        " ORDER BY t.created_at, t.id")
    recent = [r for r in rows if since is None or r["created_at"] >= since]
    if not recent:
        raise NoConversations("no stored conversations" + (f" since {since:%Y-%m-%d}"
                                                          if since else ""))
    refused = {r["conversation_id"] for r in recent if not r["consent"]}
    left = [f"{len(refused)} conversation(s) whose person has not consented"] if refused else []
    if not any(r["consent"] for r in recent):
        raise NoConversations(f"no stored conversation has its person's consent ({len(refused)}"
                              " without it); a person gives it through /api/consent")
    turns = [_turn(r) for r in rows if r["consent"]]
    eligible = {r["id"] for r in recent if r["consent"]}
    return turns, eligible, left


def _turn(r: dict[str, Any]) -> StoredTurn:
    messages = r["messages"] if isinstance(r["messages"], dict) else {}
    return StoredTurn(r["id"], str(r["conversation_id"]), r["user_ref"], r["created_at"],
                      str(messages.get("user", "")), r["answer"], list(r["tool_calls"] or []),
                      r["page_path"], r["audience"], _photo_ids(messages.get("all", [])))


def _photo_ids(messages: list[Any]) -> list[str]:
    """The photos sent with the turn: the ids in the chat's own hint, which ends the turn's
    user message and names one id per image part (text a person typed names none)."""
    user = next((m for m in reversed(messages) if isinstance(m, dict)
                 and m.get("role") == "user"), None)
    if user is None or not isinstance(user.get("content"), list):
        return []
    parts = user["content"]
    images = sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "image_url")
    text = next((p.get("text", "") for p in parts if isinstance(p, dict)
                 and p.get("type") == "text"), "")
    hint = _HINT.search(text)
    ids = _ATTACHMENT.findall(hint.group(1)) if hint else []
    return ids if ids and len(ids) == images else []


def history(turn: StoredTurn, conversation: list[StoredTurn], counts: Counter[str],
            names: Sequence[str], keep: Sequence[str] = ()) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    for t in conversation:
        if t.id >= turn.id:
            break
        messages += [{"user": t.user}, {"assistant": t.answer}]
    return [{role: _cut(scrub(text, counts, names, keep)) for role, text in m.items()}
            for m in messages[-HISTORY_MESSAGES:] if next(iter(m.values())).strip()]


def _cut(text: str) -> str:
    """Scrubbed first, then cut: a cut never leaves half an address behind."""
    return text[:MESSAGE_CHARS]


def context_of(turn: StoredTurn) -> dict[str, Any] | None:
    """The turn's page and audience as a case context; None for a turn stored before pages
    and audiences were recorded (a case on the wrong page would mislead)."""
    if turn.page_path is None or turn.audience is None:
        return None
    role = turn.audience if turn.audience in ("student", "staff", "super_admin") else None
    context = context_for(turn.page_path or "/", role)
    slug = context.get("toolId")
    if slug and slug not in fixtures_for("demo").slugs and slug in fixtures_for("lab").slugs:
        context["catalog"] = "lab"  # a machine of the fuller lab catalogue
    return context


async def _names(db: Database) -> list[str]:
    """The private names in the lab's records, longest first (a full name before its first
    name): students' names and handles, and the names reporters gave on tickets. Staff are
    named in what the assistant is told, publicly, and stay."""
    rows = await db.fetch(
        "SELECT name, handle FROM people WHERE role = 'student' UNION"
        " SELECT reporter_name, '' FROM tickets WHERE coalesce(reporter_name, '') <> ''")
    found = {w for r in rows for w in (r["name"], r["handle"], *r["name"].split())
             if len(w) >= 3 and w[0].isalpha()}
    return sorted(found, key=lambda w: (-len(w), w))


async def _machines(db: Database) -> list[str]:
    """The lab's own machines' names, brands and aliases: they stay in a case, as the
    fixture catalogue's do."""
    rows = await db.fetch("SELECT name, brand, aliases FROM machines")
    return [w for r in rows for w in (r["name"], r["brand"], *(r["aliases"] or []))]


def _photo(data: bytes) -> bytes | None:
    """The photo re-encoded as a JPEG with no metadata (no EXIF, no GPS)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.convert("RGB").save(out, "JPEG", quality=90)
            return out.getvalue()
    except (UnidentifiedImageError, OSError):
        return None


def _loads(case: dict[str, Any], photos: dict[str, bytes]) -> str | None:
    """The case loader's verdict on one case: None, or its reason."""
    return "; ".join(case_errors(case, photos=photos)) or None


async def make_cases(db: Database, count: int, since: dt.datetime | None = None,
                     flagged: dict[int, list[str]] | None = None) -> Made:
    """Up to `count` cases from the consented conversations, picked by kind; or, with
    `flagged` (turn id -> the online checks that failed on it), a case of each of those turns
    that is consented, with those checks."""
    turns, eligible, left = await load(db, since)
    made = Made(left_out=left)
    names = await _names(db)
    keep = await _machines(db)
    conversations: dict[str, list[StoredTurn]] = defaultdict(list)
    for t in turns:
        conversations[t.conversation].append(t)
    if flagged is not None:
        chosen, left_out = picked_turns(turns, eligible, flagged)
        made.left_out += left_out
    else:
        queued = queues(turns, eligible)
        for kind in KINDS:
            if not queued[kind]:
                made.left_out.append(f"kind {kind}: none in the consented conversations"
                                     f" ({KINDS[kind][0]})")
        chosen = pick(queued, count)
    tools = REGISTRY.all_tools()
    for n, (kind, turn) in enumerate(chosen, start=1):
        context = context_of(turn)
        if context is None:
            made.left_out.append(f"turn {turn.id} ({kind}): stored before turns recorded"
                                 " their page and audience")
            continue
        counts: Counter[str] = Counter()  # the case's own, added once it is written
        case: dict[str, Any] = {"id": f"conversation-{kind}-{n}",
                                "prompt": _cut(scrub(turn.user, counts, names, keep))}
        if context:
            case["context"] = context
        past = history(turn, conversations[turn.conversation], counts, names, keep)
        if past:
            case["history"] = past
        photos: dict[str, bytes] = {}
        if kind == "photo":
            rows = await db.fetch(
                "SELECT id, data FROM attachments WHERE id = ANY(%s::uuid[])"
                " AND created_at BETWEEN %s AND %s ORDER BY created_at, id",
                (turn.attachments, turn.at - PHOTO_WINDOW, turn.at + PHOTO_WINDOW))
            encoded = [_photo(bytes(r["data"])) for r in rows]
            if len(rows) != len(turn.attachments) or None in encoded:
                made.left_out.append(f"turn {turn.id} (photo): its photo is no longer stored"
                                     " or is not an image")
                continue
            photos = {f"conversation-{n}-{i}.jpg": data for i, data in enumerate(encoded)
                      if data is not None}
            case["photos"] = list(photos)
        checks = flagged_checks((flagged or {}).get(turn.id, [])) if kind == "flagged" \
            else KINDS[kind][1]
        case.update({k: v for k, v in checks.items() if k != "assert"})
        if "assert" in checks:
            case["assert"] = checks["assert"]
        if kind == "staff-action":
            action = next(str(c["name"]) for c in turn.tool_calls
                          if getattr(tools.get(str(c.get("name"))), "kind", None) == "action")
            case["assert"] = [{"kind": "proposed_action", "value": action}]
        reason = _loads(case, photos)
        if reason is not None:
            made.left_out.append(f"turn {turn.id} ({kind}): the case loader refuses it:"
                                 f" {reason}")
            continue
        calls = scrub_calls(turn.tool_calls, counts, names, keep)
        cues = name_cues_left(case, calls)
        if cues:
            made.held_back.append(
                f"turn {turn.id} ({kind}): a name may follow "
                + ", ".join(f"“{c}”" for c in cues) + " (no detector resolved it)")
            continue
        made.photos.update(photos)
        made.scrubbed.update(counts)
        if calls:
            made.calls[case["id"]] = calls
        made.cases.append((kind, case))
    return made
