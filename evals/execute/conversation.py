"""The scenario path: a simulated visitor talks to the app for several turns.

Each conversation gets its own database, cloned from the run's template (`CREATE DATABASE …
TEMPLATE`), so write tools run for real and nothing leaks between conversations; action tools
still only propose cards, which the visitor confirms through the same code as the web route
when the scenario says `confirm: true`. Tools with frozen responses answer from them; a
live-network tool without one answers an error, never the network. The end state is read
before the database is dropped.

The visitor is the `sim_user` model job. It sees its own instructions and the conversation,
never the criteria, and ends with STOP or at `max_turns`.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from app.capabilities import Tool, ToolContext, ToolError
from app.capabilities._proposals import ProposalError, decide_proposal
from app.chat.loop import run_turn
from app.chat.models import ChatModel
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.chat.reply import Usage
from app.chat.turn import prepare_turn
from app.db import Database
from app.identity import audience_of, demo_identity
from app.manuals import ManualLibrary
from evals.checks.judged import JUDGED, JudgedSpec
from evals.execute.executors import Transcript, _calls
from evals.execute.harness import DB_PREFIX, EvalEnv
from evals.fixtures.lab_catalog import seed_lab_catalog
from evals.load.scenarios import SELECTABLE, STYLES, Criterion, EndState, Scenario, ToolResponses
from evals.record.results import CheckResult

STOP = "STOP"
_STOPS = re.compile(rf"\b{STOP}\b")  # the word in capitals; "the laser stopped" is not it
MAX_VISITOR_CHARS = 2000

VISITOR_PROMPT = """You are role-playing a person at a university makerspace who is talking to \
the lab's chat assistant. Stay in character; never say you are an AI or a simulation.

Who you are: {who}
What you want: {wants}
What you know: {knows}
What you do not know: {does_not_know}
What you will say when asked: {will_say}
What you will not say: {wont_say}

How you write: {style}

Write only your next message to the assistant, as that person would type it: one short \
message, no quotation marks, no role names. When you have what you came for, or you want to \
leave, write only {stop}."""


class VisitorError(RuntimeError):
    """The simulated visitor failed to play its part: the conversation is an ERROR."""


@dataclass(frozen=True)
class ScenarioItem:
    """One conversation of a run: a scenario in one visitor style. The runner schedules it as
    it schedules a case."""

    scenario: Scenario
    style: str
    criteria: tuple[Criterion, ...]
    visitor_model: ChatModel | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        return f"{self.scenario.id}@{self.style}"

    @property
    def file(self) -> str:
        return self.scenario.file

    @property
    def group(self) -> str | None:
        return self.scenario.group

    @property
    def prompt(self) -> str:
        return self.scenario.opening or f"(the {self.style} visitor writes the first message)"

    @property
    def context(self) -> Any:
        return self.scenario.context

    # A scenario carries no photos, history or single-turn assertions of a case.
    photos = ()
    history = ()
    checks = ()

    @property
    def judged(self) -> bool:
        return bool(self.criteria)

    @property
    def where(self) -> str:
        return self.scenario.where

    def content(self) -> dict[str, Any]:
        """What the plan fingerprint hashes: everything that decides what is asked and how."""
        s = self.scenario
        return {"scenario": s.id, "style": self.style, "context": s.context.model_dump(),
                "visitor": s.visitor.model_dump(), "opening": s.opening,
                "max_turns": s.max_turns, "confirm": s.confirm,
                "criteria": [c.model_dump() for c in self.criteria],
                "expect_actions": [a.model_dump() for a in s.expect_actions],
                "end_state": [e.model_dump() for e in s.end_state],
                "tool_responses": {k: v.model_dump() for k, v in s.tool_responses.items()}}

    def executor(self) -> ScenarioConversation:
        return ScenarioConversation(self)

    async def checks_on(self, transcript: Transcript, judge: Any) -> list[CheckResult]:
        return await scenario_checks(self, transcript, judge)


def scenario_items(scenarios: list[Scenario], shared: list[Any], *, full: bool,
                   visitor_model: ChatModel | None) -> list[ScenarioItem]:
    """Every conversation to run: calm only (quick) or every style a scenario allows (full)."""
    from evals.load.scenarios import QUICK_STYLES, criteria_for

    items = []
    for s in scenarios:
        styles = [st for st in s.styles if full or st in QUICK_STYLES] or list(s.styles[:1])
        for style in styles:
            items.append(ScenarioItem(s, style, tuple(criteria_for(s, shared)), visitor_model))
    return items


async def _clone(env: EvalEnv) -> str:
    assert env.server_conninfo is not None and env.template is not None
    # "_conv_": never mistaken for a run's own database (DB_PREFIX, pid, then 12 hex digits)
    name = f"{DB_PREFIX}{os.getpid()}_conv_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(env.server_conninfo,
                                                     autocommit=True) as admin:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{env.template}"')
    return name


async def drop_clone(env: EvalEnv, name: str) -> None:
    assert env.server_conninfo is not None
    async with await psycopg.AsyncConnection.connect(env.server_conninfo,
                                                     autocommit=True) as admin:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def conversation_database(env: EvalEnv) -> AsyncIterator[tuple[Database, float]]:
    """A database of this conversation's own, cloned from the run's template; dropped after,
    whatever happens. Yields it and the seconds the conversation waited for it: the next
    conversation's clone is made while this one runs (copying takes 60–500 ms here under the
    local model's load), so a conversation mostly finds one ready."""
    if env.server_conninfo is None or env.template is None:
        raise RuntimeError("scenarios need the eval environment's template database")
    started = time.perf_counter()
    ready = env.next_clone
    env.next_clone = None
    try:
        name = await ready if ready is not None else await _clone(env)
    except Exception:
        name = await _clone(env)  # the one made ahead failed: make this one now
    took = time.perf_counter() - started
    if env.next_clone is None:  # one made ahead at a time, whatever runs at once
        env.next_clone = asyncio.create_task(_clone(env))
    db = Database(make_conninfo(env.server_conninfo, dbname=name), max_size=2)
    try:
        await db.open()
        yield db, took
    finally:
        await db.close()
        await drop_clone(env, name)


def frozen_tools(tools: list[Tool], responses: dict[str, ToolResponses]) -> list[Tool]:
    """Tools with frozen responses answer from them, in order; a live-network tool without
    any answers an error. Everything else runs for real."""
    used: dict[str, int] = {}

    def responder(name: str, frozen: ToolResponses) -> Any:
        async def run(ctx: ToolContext, args: Any) -> Any:
            n = used.get(name, 0)
            used[name] = n + 1
            sequence = frozen.sequence
            if n >= len(sequence) and frozen.exhausted == "error":
                raise ToolError(f"{name} has no further response in this test")
            answer = sequence[min(n, len(sequence) - 1)]
            if set(answer) == {"error"}:
                raise ToolError(str(answer["error"]))
            return answer
        return run

    async def offline(ctx: ToolContext, args: Any) -> Any:
        raise ToolError("the web cannot be read in this test")

    out = []
    for t in tools:
        if t.name in responses:
            out.append(t.with_run(responder(t.name, responses[t.name])))
        elif t.kind == "live_read":
            out.append(t.with_run(offline))
        else:
            out.append(t)
    return out


async def visitor_says(model: ChatModel, item: ScenarioItem,
                       conversation: list[dict[str, str]],
                       spent: list[Usage] | None = None) -> str | None:
    """The visitor's next message, or None when they stop; the call's usage is added to
    `spent`."""
    v = item.scenario.visitor
    system = VISITOR_PROMPT.format(
        who=v.who, wants=v.wants, knows=v.knows or "nothing special",
        does_not_know=v.does_not_know or "—", will_say=v.will_say or "what the assistant asks",
        wont_say=v.wont_say or "—", style=STYLES[item.style], stop=STOP)
    # To the visitor's model the assistant is the other party: the roles are swapped.
    turns = [{"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
             for m in conversation]
    if not turns:
        turns = [{"role": "user", "content": "(You open the lab's chat. Write your first"
                                             " message.)"}]
    reply = await model.complete([{"role": "system", "content": system}, *turns])
    if spent is not None:
        spent.append(reply.usage)
    text = (reply.content or "").strip().strip('"').strip()
    if not text or _STOPS.search(text):  # "STOP", alone or after a last word: done
        return None
    return text[:MAX_VISITOR_CHARS]


@dataclass
class ScenarioConversation:
    item: ScenarioItem

    async def run(self, env: EvalEnv | None, model: ChatModel) -> Transcript:
        assert env is not None, "scenarios run on the app path"
        scenario = self.item.scenario
        visitor = self.item.visitor_model
        if visitor is None:
            raise RuntimeError("no visitor model (the sim_user job) for this run")
        async with conversation_database(env) as (db, clone_s):
            if scenario.context.catalog == "lab":
                await seed_lab_catalog(db)
            library = ManualLibrary(db, env.library.store, env.library.embedder)
            ctx_spec = scenario.context
            identity = await demo_identity(db, ctx_spec.as_) if ctx_spec.as_ else None
            ids = await selection_ids_by_name(db, ctx_spec.page_path, ctx_spec.selection) \
                if ctx_spec.selection else []
            page = await load_page_context(db, ctx_spec.page_path, ids,
                                           role=audience_of(identity))
            conversation: list[dict[str, str]] = []
            calls: list[dict[str, Any]] = []
            usage = Usage()
            visitor_spent: list[Usage] = []
            text = scenario.opening or await visitor_says(visitor, self.item, conversation,
                                                          visitor_spent)
            if text is None:  # no conversation happened: the harness's failure, not the app's
                raise VisitorError("the simulated visitor wrote no first message")
            tools: list[Tool] | None = None
            messages: list[dict[str, Any]] = []
            started = time.perf_counter()
            for turn_no in range(1, scenario.max_turns + 1):
                if text is None:
                    break
                turn = await prepare_turn(db, env.settings, identity=identity, page=page,
                                          text=text, history=conversation, manuals=library)
                composed = turn.composed
                if tools is None:  # one set per conversation: a sequence runs across turns
                    tools = frozen_tools(composed.tools, scenario.tool_responses)
                composed.tools = [t for t in tools if t.name in composed.tool_names]
                messages = turn.messages
                result = await run_turn(model, composed, messages, turn.ctx,
                                        max_steps=env.settings.max_tool_steps)
                usage = usage + result.usage
                calls += _calls(result.tool_calls)
                conversation += [{"role": "user", "content": text},
                                 {"role": "assistant", "content": result.answer}]
                if scenario.confirm:
                    calls += await _confirm_cards(db, env, identity, result.proposals)
                if turn_no < scenario.max_turns:  # the visitor's last word would go unanswered
                    text = await visitor_says(visitor, self.item, conversation, visitor_spent)
            state = await end_state_checks(db, scenario.end_state)
        answer = conversation[-1]["content"] if conversation else ""
        transcript = Transcript(answer, calls, turns=conversation, messages=messages,
                                usage=usage,
                                latency_ms=int((time.perf_counter() - started) * 1000),
                                state_checks=state, conversation=True,
                                side_usage={"visitor_tokens": sum(
                                    u.prompt_tokens + u.completion_tokens
                                    for u in visitor_spent)},
                                timings={"database_clone_ms": int(clone_s * 1000)})
        return transcript


async def _confirm_cards(db: Database, env: EvalEnv, identity: Any,
                         cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The visitor presses Confirm on every card: the web route's own code path."""
    done = []
    for card in cards:
        args = {"proposal_id": card["proposal_id"]}
        try:
            result = await decide_proposal(db, env.settings, identity, card["proposal_id"],
                                           confirm=True)
            done.append({"name": "confirm_card", "arguments": args, "result": result,
                         "kind": "confirm", "error": None, "outcome": "ok"})
        except ProposalError as exc:
            done.append({"name": "confirm_card", "arguments": args,
                         "result": {"error": str(exc)}, "kind": "confirm",
                         "error": "tool_error", "outcome": "error"})
    return done


def _where(state: EndState) -> tuple[str, list[Any]]:
    columns = SELECTABLE[state.table]
    clauses, params = [], []
    for key, want in state.where.items():
        if key.endswith("_contains"):  # the text itself: % and _ are not wildcards here
            clauses.append(f"{columns[key.removesuffix('_contains')]} ILIKE %s ESCAPE '\\'")
            params.append("%" + re.sub(r"([\\%_])", r"\\\1", str(want)) + "%")
        elif want is None:
            clauses.append(f"{columns[key]} IS NULL")
        elif isinstance(want, str):
            clauses.append(f"lower({columns[key]}::text) = lower(%s)")
            params.append(want)
        else:
            clauses.append(f"{columns[key]} = %s")
            params.append(want)
    return " AND ".join(clauses) or "true", params


async def end_state_checks(db: Database, states: tuple[EndState, ...]) -> list[CheckResult]:
    """Each end-state selector against the conversation's database (tables and columns come
    from SELECTABLE, checked at load; values are parameters)."""
    out = []
    for state in states:
        where, params = _where(state)
        row = await db.fetchone(f"SELECT count(*) AS n FROM {state.table} t WHERE {where}",
                                tuple(params))
        n = int(row["n"]) if row else 0
        wanted = "exists" if state.exists else "does not exist"
        passed = (n > 0) == state.exists
        out.append(CheckResult(
            kind=f"end_state {state.table} {state.where or '(any row)'} {wanted}",
            passed=passed, reason=f"{n} matching row(s) in {state.table}"))
    return out


def matches(actual: Any, selectors: dict[str, Any]) -> list[str]:
    """What in `actual` (a dict) does not fit the selectors; empty when all fit."""
    if not isinstance(actual, dict):
        return ["not a mapping"]
    misses = []
    for key, want in selectors.items():
        if key.endswith("_contains"):
            got = actual.get(key.removesuffix("_contains"))
            if not (isinstance(got, str) and str(want).lower() in got.lower()):
                misses.append(f"{key.removesuffix('_contains')} {got!r} lacks {want!r}")
            continue
        got = actual.get(key)
        if want is None:
            ok = got in (None, "")
        elif isinstance(want, str) and isinstance(got, str):
            ok = got.strip().lower() == want.strip().lower()
        else:
            ok = got == want
        if not ok:
            misses.append(f"{key} is {got!r}, not {want!r}")
    return misses


def action_checks(item: ScenarioItem, transcript: Transcript) -> list[CheckResult]:
    out = []
    for action in item.scenario.expect_actions:
        ran = [c for c in transcript.tool_calls
               if c["name"] == action.tool and c.get("outcome") == "ok"]
        kind = f"expect_action {action.tool} {action.arguments or ''}".strip()
        fits = [c for c in ran if not matches(c["arguments"], action.arguments)
                and not matches(c["result"], action.result)]
        if fits:
            out.append(CheckResult(kind=kind, passed=True,
                                   reason=f"{action.tool} ran with matching arguments"))
        elif ran:
            why = "; ".join(matches(ran[-1]["arguments"], action.arguments)
                            + matches(ran[-1]["result"], action.result))
            out.append(CheckResult(kind=kind, passed=False,
                                   reason=f"{action.tool} ran {len(ran)} time(s), none fits:"
                                          f" {why}"))
        else:
            out.append(CheckResult(kind=kind, passed=False,
                                   reason=f"{action.tool} never ran successfully"))
    return out


async def scenario_checks(item: ScenarioItem, transcript: Transcript, judge: Any
                          ) -> list[CheckResult]:
    """Verdict material: every assistant turn answered, expected actions, end state, then the
    criteria (required ones counted, informational ones reported)."""
    checks = []
    blank = [n for n, m in enumerate(transcript.turns, start=1)
             if m["role"] == "assistant" and not m["content"].strip()]
    checks.append(CheckResult(
        kind="answered", passed=bool(transcript.turns) and not blank,
        reason="every turn answered" if transcript.turns and not blank
        else f"no answer at message(s) {blank or 'the first'}"))
    checks += action_checks(item, transcript)
    checks += transcript.state_checks
    for c in item.criteria:
        spec = JudgedSpec(f"criterion ({c.enforcement}): {c.statement}", c.statement, None,
                          item.scenario.context, required=c.enforcement == "required")
        checks.append(await JUDGED["criterion"](spec, transcript, judge))
    return checks
