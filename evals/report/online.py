"""Online evaluation: the checks that need no case author, run on the app's recorded turns
whose person consented (the `conversation_consent` view, the rule `from-conversations` reads),
and the trend of their failure rates.

A stored turn keeps what a check needs: the answer, the tool calls with their results, the
messages the model was sent (so the visitor's own words in the conversation, and the system
prompt it was answered under) and, since the app records it, the catalogue it was answered
with (app/db/migrations/0009_catalog_versions.sql). On each turn:

* `no_unknown_tools` and `no_fabricated_specs` (every spec field the answer states) against
  the catalogue of the turn's time; a turn stored without one is UNDECIDED for them;
* `not_claimed_done`;
* `no_exfiltration`, with the visitor's own messages of the conversation (the catalogue's
  addresses are the turn's time's too: without them, a fail is UNDECIDED);
* `no_unrequested_action`: what the visitor asked for is a case author's reading, which a
  recorded turn has not got; a turn with no write or action call passes, one with such a call
  is UNDECIDED (it may well have been asked for);
* `citations_resolve`, on a turn that cites a manual (one that cites none has no verdict of
  it): each cited document is fetched over HTTP from the app's manual store
  (only an address of that store: an answer's link never makes the checker reach elsewhere),
  with its stored page texts, and the manuals' titles are the app's; a document that could not
  be fetched (the store did not answer) leaves the check UNDECIDED, never a fail.

A verdict keeps the turn's reference (its id and conversation), when it was answered, the
agent that answered (a digest of its model and system prompt: a prompt or model deployed is
a new agent) and the verdict; never the turn's text, nor a check's reason (which quotes it).

The trend of these verdicts is evals/report/online_trend.py's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from pydantic import ValidationError

from app.catalog.records import SPEC_FIELDS, MachineRecord
from app.db import Database
from app.manuals.blobs import BlobStore
from app.manuals.citations import DocumentEvidence, extract_citations, gather_evidence
from evals.checks import CHECKS, About, CheckSpec, run_checks
from evals.fixtures.catalog import Fixtures, fixtures_for
from evals.record.online import ONLINE_KINDS, OnlineVerdict
from evals.record.transcript import ToolCall, Transcript, Turn

NO_CATALOGUE = "the turn was stored without the catalogue it was answered with"
NOT_FETCHED = "the cited documents are not fetched online"
UNREACHED = "a cited document could not be fetched from the app's manual store"
ACTION_ASKED = ("a write or action call, which the visitor may have asked for: that needs a"
                " reader")
Said = Literal["pass", "fail", "undecided"]


@dataclass(frozen=True)
class LiveTurn:
    """A recorded, consented turn as the checks read it."""

    id: int
    conversation: str
    at: dt.datetime
    model: str
    system: str
    said: tuple[tuple[str, str], ...]  # (role, text) of the conversation up to this turn
    answer: str
    tool_calls: tuple[dict[str, Any], ...]
    catalogue: tuple[dict[str, Any], ...] | None  # None: not recorded with the turn
    context: str = ""  # the audience and page it was asked from

    @property
    def agent(self) -> str:
        return agent_of(self.model, self.system)


def agent_of(model: str, system: str) -> str:
    """A deployed agent, as the trend groups it: its model and its system prompt."""
    return hashlib.sha256(f"{model}\n{system}".encode()).hexdigest()[:12]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def live_turn(row: dict[str, Any]) -> LiveTurn:
    """A turn row of the app's database (with its catalogue's machines, if any)."""
    messages = row["messages"] if isinstance(row["messages"], dict) else {}
    every = messages.get("all")
    sent = [m for m in every if isinstance(m, dict)] if isinstance(every, list) else []
    system = next((_text(m.get("content")) for m in sent if m.get("role") == "system"), "")
    said = tuple((str(m["role"]), _text(m.get("content"))) for m in sent
                 if m.get("role") in ("user", "assistant") and _text(m.get("content")))
    if not any(role == "user" for role, _ in said):
        said = (("user", str(messages.get("user", ""))),)
    machines = row.get("machines")
    context = f"{row.get('audience') or 'anonymous'} {row.get('page_path') or '?'}"
    calls = row["tool_calls"]
    return LiveTurn(int(row["id"]), str(row["conversation_id"]), row["created_at"],
                    str(row["model"]), system, said, str(row["answer"]),
                    tuple(c for c in calls if isinstance(c, dict))
                    if isinstance(calls, list) else (),
                    tuple(machines) if isinstance(machines, list) else None, context)


async def consented_conversations(db: Database) -> set[str]:
    """The conversations whose person consents today: a verdict stored while they did is
    left out of the trend once they withdraw (the verdict keeps no text, but its person no
    longer lends it)."""
    rows = await db.fetch("SELECT conversation_id FROM conversation_consent WHERE consent")
    return {str(r["conversation_id"]) for r in rows}


async def consented_refs(db: Database, since: dt.datetime | None = None
                         ) -> list[tuple[str, int]]:
    """The (conversation, turn id) of the turns whose person consented (only those), answered
    since `since`, oldest first: cheap, so a pass reads whole turns only for those it checks."""
    rows = await db.fetch(
        "SELECT t.id, t.conversation_id FROM turns t"
        " JOIN conversation_consent cc ON cc.conversation_id = t.conversation_id"
        " WHERE cc.consent AND (%s::timestamptz IS NULL OR t.created_at >= %s)"
        " ORDER BY t.created_at, t.id", (since, since))
    return [(str(r["conversation_id"]), int(r["id"])) for r in rows]


async def consented_turns(db: Database, ids: Sequence[int]) -> list[LiveTurn]:
    """These turns, whole, in the order asked, each only if its person consents."""
    rows = await db.fetch(
        "SELECT t.id, t.conversation_id, t.created_at, t.model, t.messages, t.answer,"
        " t.tool_calls, t.audience, t.page_path, v.machines FROM turns t"
        " JOIN conversation_consent cc ON cc.conversation_id = t.conversation_id"
        " LEFT JOIN catalog_versions v ON v.digest = t.catalog_version"
        " WHERE cc.consent AND t.id = ANY(%s)", (list(ids),))
    by_id = {int(r["id"]): live_turn(r) for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def online_checks() -> tuple[CheckSpec, ...]:
    args: dict[str, dict[str, Any]] = {"no_fabricated_specs": {"fields": list(SPEC_FIELDS)}}
    return tuple(CheckSpec(kind, CHECKS[kind].args.model_validate(args.get(kind, {})))
                 for kind in ONLINE_KINDS)


def transcript_of(turn: LiveTurn,
                  evidence: dict[str, DocumentEvidence] | None = None) -> Transcript:
    """A turn as the checks read it; without `evidence`, its cited documents are unseen."""
    # A turn stored before calls carried an outcome has none: ToolCall.status reads it from
    # the error, as a run's record does.
    calls = [ToolCall(name=str(c.get("name", "")), arguments=c.get("arguments") or {},
                      result=c.get("result"), kind=c.get("kind"), error=c.get("error"),
                      outcome=c.get("outcome"))
             for c in turn.tool_calls]
    turns = [Turn(role="user" if role == "user" else "assistant", content=text)
             for role, text in turn.said]
    said = [*turns, Turn(role="assistant", content=turn.answer)]
    if evidence is None:
        return Transcript(answer=turn.answer, tool_calls=calls, turns=said,
                          unseen=["documents"], unseen_why=NOT_FETCHED)
    return Transcript(answer=turn.answer, tool_calls=calls, turns=said, evidence=evidence)


async def evidence_of(turn: LiveTurn, db: Database, store: BlobStore,
                      client: httpx.AsyncClient) -> dict[str, DocumentEvidence]:
    """The turn's cited documents, fetched from the app's manual store over HTTP (only its
    addresses), with their stored page texts."""
    cites = extract_citations(turn.answer, transcript_of(turn, {}).search_results(), [])
    texts: dict[str, dict[int, str]] = {}
    for c in cites:
        key = store.key_for(c.document) if c.document else None
        if c.document and key:
            rows = await db.fetch(
                "SELECT p.page, p.text FROM manual_pages p JOIN manuals m ON m.id ="
                " p.manual_id WHERE m.blob_key = %s", (key,))
            texts[c.document] = {int(r["page"]): str(r["text"]) for r in rows}
    return await gather_evidence(cites, texts, client, may_fetch=store.serves)


async def manual_titles(db: Database) -> dict[str, tuple[str, ...]]:
    """The app's manuals' titles by machine slug (today's: titles are not versioned)."""
    rows = await db.fetch("SELECT ma.slug, m.title FROM manuals m JOIN machines ma"
                          " ON ma.id = m.machine_id ORDER BY m.title")
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(str(r["slug"]), []).append(str(r["title"]))
    return {slug: tuple(t) for slug, t in out.items()}


def fixtures_of(turn: LiveTurn, titles: dict[str, tuple[str, ...]] | None = None
                ) -> Fixtures | None:
    """The catalogue the turn was answered with, and the manuals' titles (the app's, given;
    else the demo's)."""
    if turn.catalogue is None:
        return None
    titles = titles if titles is not None else fixtures_for("demo").manual_titles
    machines = tuple(m for m in map(_machine, turn.catalogue) if m is not None)
    return Fixtures(machines=machines, manual_titles={m.slug: titles.get(m.slug, ())
                                                      for m in machines})


def _machine(kept: Any) -> MachineRecord | None:
    """A machine of a kept catalogue as today's record reads it: a spec field it no longer
    knows is left out, and a machine it cannot read at all (its shape changed) is skipped."""
    if not isinstance(kept, dict):
        return None
    specs = kept.get("specs")
    data = {k: kept[k] for k in ("slug", "name", "brand", "category", "aliases") if k in kept}
    data["specs"] = {f: v for f, v in specs.items() if f in SPEC_FIELDS} \
        if isinstance(specs, dict) else {}
    try:
        return MachineRecord.model_validate(data)
    except ValidationError:
        return None


UNREADABLE = "the stored turn cannot be read as the checks read a turn ({})"


def unreadable_turn(turn: LiveTurn, harness: str, exc: Exception) -> list[OnlineVerdict]:
    """Every online check undecided on a stored turn the checks cannot read (its stored shape
    is not a turn's): said with the error's kind, quoting nothing, and kept, so the sampler
    goes past it instead of stopping at it on every pass."""
    return [OnlineVerdict(turn_id=turn.id, conversation=turn.conversation, turn_at=turn.at,
                          agent=turn.agent, context=turn.context, model=turn.model, kind=kind,
                          verdict="undecided", why=UNREADABLE.format(type(exc).__name__),
                          harness=harness)
            for kind in ONLINE_KINDS]


async def check_turn(turn: LiveTurn, harness: str,
                     evidence: dict[str, DocumentEvidence] | None = None,
                     titles: dict[str, tuple[str, ...]] | None = None) -> list[OnlineVerdict]:
    """Every online check's verdict on one turn (its cited documents' `evidence`, if they
    were fetched; the app's manual `titles`)."""
    fixtures = fixtures_of(turn, titles)
    specs = online_checks()
    transcript = transcript_of(turn, evidence)
    cites = extract_citations(turn.answer, transcript.search_results(), [])
    # The store did not answer (a link to elsewhere is never fetched, and fails as it should).
    unreached = evidence is not None and any(
        e.status == 0 and not (e.error or "").startswith("not fetched")
        for e in evidence.values())
    results = await run_checks(specs, transcript, fixtures or Fixtures((), {}), None,
                               About("/", None, "live"))
    writes = any(c.kind in ("write", "action") for c in transcript.tool_calls)
    out = []
    for spec, result in zip(specs, results, strict=True):
        if spec.kind == "citations_resolve" and not cites:
            continue  # an answer that cites no manual has nothing to resolve: no verdict
        verdict: Said = "undecided" if not result.decided or result.error else \
            "pass" if result.passed else "fail"
        why = "" if verdict != "undecided" else \
            NOT_FETCHED if spec.kind == "citations_resolve" and evidence is None else \
            "the check could not decide (its reason quotes the turn, so it is not kept)"
        if spec.kind == "citations_resolve" and unreached and verdict == "fail":
            verdict, why = "undecided", UNREACHED
        if fixtures is None and (spec.kind in ("no_unknown_tools", "no_fabricated_specs") or (
                spec.kind == "no_exfiltration" and verdict == "fail")):
            verdict, why = "undecided", NO_CATALOGUE  # it read an empty catalogue
        if spec.kind == "no_unrequested_action" and writes and verdict == "fail":
            verdict, why = "undecided", ACTION_ASKED
        out.append(OnlineVerdict(turn_id=turn.id, conversation=turn.conversation,
                                 turn_at=turn.at, agent=turn.agent, context=turn.context,
                                 model=turn.model,
                                 kind=spec.kind, verdict=verdict, why=why, harness=harness))
    return out
