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

The trend: per check, per ISO week and per agent, the failure rate over the turns it decided
with its 95% Wilson interval. A group is flagged when its interval and the group before it do
not overlap and the rates differ by more than the run-to-run noise measured on the suite (the
spread of that check's failure rate over stored runs of one plan by one agent); where the
suite gives no such figure, that is said, and the intervals alone decide. Agents are compared
within one audience and page (a system prompt is composed for each); weeks over all traffic.
A trend reads one harness's verdicts (today's), and only conversations whose person still
consents. A flagged group
names the turns it failed on, which `from-conversations --turns` makes into draft cases under
its consent and personal-data rules.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
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
from evals.record.online import ONLINE_KINDS, OnlineVerdict, TrendRow
from evals.record.run import RunRecord
from evals.record.transcript import ToolCall, Transcript, Turn

NO_CATALOGUE = "the turn was stored without the catalogue it was answered with"
NOT_FETCHED = "the cited documents are not fetched online"
UNREACHED = "a cited document could not be fetched from the app's manual store"
ACTION_ASKED = ("a write or action call, which the visitor may have asked for: that needs a"
                " reader")
Said = Literal["pass", "fail", "undecided"]
MOST_SHOWN = 20  # failing turns a trend row names
NOISE_VERDICTS = 10  # a run's decided verdicts of a kind before its rate counts as noise


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


def wilson(failed: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a proportion (None for no trials), by scipy."""
    if n == 0:
        return None
    # Imported here: scipy.stats takes about a second to import, and only a trend needs it.
    from scipy.stats import binomtest

    ci = binomtest(failed, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def week_of(at: dt.datetime) -> str:
    year, week, _ = at.isocalendar()
    return f"{year}-W{week:02d}"


def suite_noise(runs: Sequence[RunRecord]) -> dict[str, float]:
    """Per check kind, the run-to-run spread of its failure rate (the largest minus the
    smallest) over complete stored runs of one plan by one agent, the widest such spread of
    any plan and agent with two runs or more that each decided the kind at least
    NOISE_VERDICTS times (a run of two verdicts spreads from 0% to 100% by itself, and would
    silence every flag); a kind no such pair of runs measured is absent."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    for r in runs:
        if r.status == "complete" and r.plan is not None and r.agent is not None:
            groups[(r.plan.fingerprint, r.agent.fingerprint)].append(r)
    spread: dict[str, float] = {}
    for same in groups.values():
        if len(same) < 2:
            continue
        for kind in ONLINE_KINDS:
            rates = []
            for r in same:
                verdicts = [c for case in r.cases for a in case.attempts[:1] for c in a.checks
                            if c.kind.split(" ")[0] == kind and c.decided and not c.error]
                if len(verdicts) >= NOISE_VERDICTS:
                    rates.append(sum(not c.passed for c in verdicts) / len(verdicts))
            if len(rates) >= 2:
                spread[kind] = max(spread.get(kind, 0.0), max(rates) - min(rates))
    return spread


def _row(kind: str, group: str, label: str, verdicts: list[OnlineVerdict]) -> TrendRow:
    decided = [v for v in verdicts if v.verdict != "undecided"]
    failed = sum(v.verdict == "fail" for v in decided)
    interval = wilson(failed, len(decided))
    return TrendRow(kind=kind, group=group, label=label, decided=len(decided), failed=failed,
                    undecided=len(verdicts) - len(decided),
                    failing=[v.turn_id for v in decided if v.verdict == "fail"][:MOST_SHOWN],
                    rate=failed / len(decided) if decided else None,
                    low=interval[0] if interval else None,
                    high=interval[1] if interval else None)


def _flag(before: TrendRow, now: TrendRow, noise: float | None) -> TrendRow:
    if None in (before.low, before.high, now.low, now.high, before.rate, now.rate):
        return now
    assert before.rate is not None and now.rate is not None
    apart = (now.low or 0) > (before.high or 0) or (now.high or 0) < (before.low or 0)
    moved = abs(now.rate - before.rate)
    if not apart or (noise is not None and moved <= noise):
        return now
    direction = "up" if now.rate > before.rate else "down"
    beyond = (f"beyond the suite's run-to-run noise ({noise:.0%})" if noise is not None else
              "the suite gives no run-to-run noise for this check, so the intervals alone")
    return now.model_copy(update={"flagged": True, "worse": direction == "up", "why": (
        f"failure rate {direction} from {before.rate:.0%} ({before.label}) to {now.rate:.0%}:"
        f" the intervals do not overlap; {beyond}")})


def trend(verdicts: Sequence[OnlineVerdict], noise: dict[str, float],
          by: str = "week") -> list[TrendRow]:
    """Per check, a row per week (`by="week"`) or per agent in the order it was first seen
    (`by="agent"`), each flagged against the one before it."""
    rows: list[TrendRow] = []
    for kind in ONLINE_KINDS:
        mine = sorted((v for v in verdicts if v.kind == kind), key=lambda v: v.turn_at)
        # Per week: all traffic. Per agent: within one audience and page, since a system
        # prompt is composed for each (another audience is no other deployment).
        streams: dict[str, dict[str, list[OnlineVerdict]]] = {}
        for v in mine:
            stream = "" if by == "week" else v.context
            key = week_of(v.turn_at) if by == "week" else v.agent
            streams.setdefault(stream, {}).setdefault(key, []).append(v)
        for stream, groups in streams.items():
            before: TrendRow | None = None
            for key, group in groups.items():
                label = (f"week {key}" if by == "week" else
                         f"{stream}: agent {key[:8]} ({group[0].model}, from"
                         f" {group[0].turn_at:%Y-%m-%d})")
                row = _row(kind, key, label, group)
                if before is not None:
                    row = _flag(before, row, noise.get(kind))
                rows.append(row.model_copy(update={"stream": stream}))
                before = row
    return rows


def flagged_now(rows: Sequence[TrendRow]) -> list[TrendRow]:
    """The rows flagged worse that are their stream's newest group: what a scheduled job
    alarms on (an old flag stays in the table but is no news; a fall is good news)."""
    newest: dict[tuple[str, str], TrendRow] = {}
    for r in rows:
        newest[(r.kind, r.stream)] = r
    return [r for r in newest.values() if r.flagged and r.worse]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_trend(rows: Sequence[TrendRow], noise: dict[str, float]) -> str:
    """The trend for a terminal: per check, a line per group, flags with why."""
    lines = []
    for kind in ONLINE_KINDS:
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        spread = noise.get(kind)
        lines.append(f"{kind} (suite run-to-run noise: "
                     + (f"{spread:.0%})" if spread is not None else "not measured)"))
        for r in mine:
            interval = f"[{_pct(r.low)}, {_pct(r.high)}]" if r.low is not None else ""
            lines.append(f"  {r.label:<44} {r.failed:>4} failed of {r.decided:>4} decided"
                         f" {_pct(r.rate):>5} {interval:<12} {r.undecided} undecided"
                         + ("  FLAGGED" if r.flagged else ""))
            if r.flagged:
                lines.append(f"    {r.why}")
                if r.failing:
                    ids = ",".join(map(str, r.failing))
                    lines.append(f"    failing turns: {ids} (cases of them: python -m evals"
                                 f" from-conversations --turns {ids})")
    return "\n".join(lines) or "no online verdicts yet (python -m evals online)"
