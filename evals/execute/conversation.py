"""The scenario path: a simulated visitor talks to the app for several turns.

Each conversation gets its own database, cloned from the run's template (`CREATE DATABASE …
TEMPLATE`), so write tools run for real and nothing leaks between conversations; action tools
still only propose cards, which the visitor confirms through the same code as the web route
when the scenario says `confirm: true`. Tools with frozen responses answer from them
(evals/execute/responses.py); a live-network tool without one answers an error, never the
network. The end state is counted before the database is dropped, for the end_state checks.
A scenario's photos go with one visitor message (`photo_turn`, the first by default) through the
route's own path: the attachment hint and image parts, the QR reader (or the scenario's
`qr_codes:`), compose_chat's photo handling, and the attachments table its tools refer to.
A comparison point's frozen agent is told, every turn, the system prompt and tool schemas it
was told then; its tools run as today's do here.

The visitor is the `sim_user` model job. It sees its own instructions and the conversation,
never the criteria, and ends with STOP or at `max_turns`. It is told which of its messages
carries the photos, never what they show.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from app.capabilities import Tool
from app.capabilities._proposals import ProposalError, decide_proposal
from app.catalog import index as index_catalog
from app.chat.loop import run_turn
from app.chat.models import ChatModel
from app.chat.page_context import load_page_context, selection_ids_by_name
from app.chat.reply import Usage
from app.chat.turn import prepare_turn, store_photos
from app.db import Database
from app.identity import Identity, audience_of, demo_identity
from app.manuals import ManualLibrary
from evals.checks.scenario import EndState
from evals.execute.agent import tell_as_frozen
from evals.execute.compose import load_photo, qr_reader
from evals.execute.env import EvalEnv, conversation_database
from evals.execute.executors import Execution, Setup, executor, tool_calls
from evals.execute.responses import FrozenResponder
from evals.fixtures.lab_catalog import seed_catalog
from evals.load.conversations import Conversation
from evals.load.items import EvalItem
from evals.load.scenarios import PHOTO_CUES, SELECTABLE, STYLES
from evals.record.fingerprint import digest
from evals.record.transcript import ToolCall, Transcript, Turn, as_json

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


OPENING = "(You open the lab's chat. Write your first message.)"


def visitor_prompt_hash() -> str:
    """The hash of everything the visitor is instructed with, whatever the scenario: the
    template, every style's wording, the stop word, the opening cue and the length cap. The
    plan holds it: a changed visitor is a changed plan, never an agent's improvement."""
    return digest([VISITOR_PROMPT, dict(sorted(STYLES.items())), STOP, OPENING,
                   MAX_VISITOR_CHARS])


class VisitorError(RuntimeError):
    """The simulated visitor failed to play its part: the conversation is an ERROR."""


async def visitor_says(model: ChatModel, item: Conversation,
                       conversation: list[dict[str, str]],
                       spent: list[Usage] | None = None) -> str | None:
    """The visitor's next message, or None when they stop; the call's usage is added to
    `spent`."""
    v = item.scenario.visitor
    system = VISITOR_PROMPT.format(
        who=v.who, wants=v.wants, knows=v.knows or "nothing special",
        does_not_know=v.does_not_know or "—", will_say=v.will_say or "what the assistant asks",
        wont_say=v.wont_say or "—", style=STYLES[item.style], stop=STOP)
    cue = photo_cue(item, sum(m["role"] == "user" for m in conversation) + 1)
    if cue:
        system += "\n\n" + cue
    # To the visitor's model the assistant is the other party: the roles are swapped.
    turns = [{"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
             for m in conversation]
    if not turns:
        turns = [{"role": "user", "content": OPENING}]
    reply = await model.complete([{"role": "system", "content": system}, *turns])
    if spent is not None:
        spent.append(reply.usage)
    text = (reply.content or "").strip().strip('"').strip()
    if not text or _STOPS.search(text):  # "STOP", alone or after a last word: done
        return None
    return text[:MAX_VISITOR_CHARS]


def photo_cue(item: Conversation, message: int) -> str | None:
    """What the visitor is told of its photos while writing its `message`-th message: that
    this one carries them, or which one did; nothing before it (or without photos)."""
    at = item.scenario.sends_photos_at
    if at is None or message < at:
        return None
    n = len(item.scenario.photos)
    words = {"photos": "a photo" if n == 1 else f"{n} photos", "them": "it" if n == 1 else "them",
             "turn": at}
    return PHOTO_CUES["now" if message == at else "sent"].format(**words)


def repeatable_ids(seed: str) -> Callable[[], str]:
    """Proposal ids for one conversation: UUIDs, the same in every run of it (each runs in a
    database of its own), so what the model is told of a proposal never differs by chance
    and its later calls replay from the call cache."""
    n = itertools.count(1)
    return lambda: str(uuid.uuid5(uuid.NAMESPACE_URL, f"makerlab-eval:{seed}:{next(n)}"))

@executor("conversation")
class ScenarioConversation:
    """A scenario conversation: the visitor and the assistant, turn by turn, in a database of
    the conversation's own."""

    async def run(self, item: EvalItem, setup: Setup) -> Execution:
        if not isinstance(item, Conversation):
            raise TypeError(f"the conversation executor runs scenarios, not"
                            f" {type(item).__name__}")
        env, model, visitor = setup.env, setup.model, setup.visitor
        if env is None:
            raise RuntimeError("scenarios run on the app path")
        if visitor is None:
            raise RuntimeError("no visitor model (the sim_user job) for this run")
        scenario = item.scenario
        async with conversation_database(env) as (db, clone_s):
            if scenario.context.catalog != "demo":
                await seed_catalog(db, scenario.context.catalog)
                await index_catalog(db, env.library.embedder)
            library = ManualLibrary(db, env.library.store, env.library.embedder)
            ctx_spec = scenario.context
            identity = await demo_identity(db, ctx_spec.as_) if ctx_spec.as_ else None
            ids = await selection_ids_by_name(db, ctx_spec.page_path, list(ctx_spec.selection)) \
                if ctx_spec.selection else []
            page = await load_page_context(db, ctx_spec.page_path, ids,
                                           role=audience_of(identity))
            conversation: list[dict[str, str]] = []
            sent: list[Turn] = []  # the conversation as the record keeps it, with its photos
            photos = tuple(load_photo(name) for name in scenario.photos)
            read_qr = qr_reader(scenario.qr_codes)
            qr_hints: list[str] = []
            calls: list[ToolCall] = []
            usage = Usage()
            visitor_spent: list[Usage] = []
            text = scenario.opening or await visitor_says(visitor, item, conversation,
                                                          visitor_spent)
            if text is None:  # no conversation happened: the harness's failure, not the app's
                raise VisitorError("the simulated visitor wrote no first message")
            tools: list[Tool] | None = None
            # One per conversation: its state and sequences run across turns, and no other
            # conversation (another style, a retry) shares them.
            frozen = FrozenResponder(scenario.tool_responses, scenario.response_state)
            messages: list[dict[str, Any]] = []
            started = time.perf_counter()
            new_id = repeatable_ids(item.id)
            for turn_no in range(1, scenario.max_turns + 1):
                if text is None:
                    if turn_no <= (scenario.sends_photos_at or 0):  # the harness's, not the app's
                        raise VisitorError(f"the simulated visitor stopped before message"
                                           f" {scenario.sends_photos_at}, which carries the"
                                           f" photos")
                    break
                with_photos = photos if turn_no == scenario.sends_photos_at else ()
                turn = await prepare_turn(db, env.settings, identity=identity, page=page,
                                          text=text, history=conversation, photos=with_photos,
                                          manuals=library, read_qr=read_qr)
                composed = turn.composed
                qr_hints += [h.text for h in composed.qr_hints]
                if setup.frozen is not None:  # a comparison point's agent, as it was told
                    tell_as_frozen(composed, setup.frozen, item.context.key)
                if tools is None:  # one set per conversation: a sequence runs across turns
                    tools = frozen.scenario_tools(composed.tools)
                composed.tools = [t for t in tools if t.name in composed.tool_names]
                messages = turn.messages
                turn.ctx.new_id = new_id
                await store_photos(db, with_photos, identity)  # as the route: tools refer to them
                result = await run_turn(model, composed, messages, turn.ctx,
                                        max_steps=setup.tool_steps(env))
                usage = usage + result.usage
                calls += tool_calls(result.tool_calls)
                conversation += [{"role": "user", "content": text},
                                 {"role": "assistant", "content": result.answer}]
                sent += [Turn(role="user", content=text, photos=[p.name for p in with_photos]),
                         Turn(role="assistant", content=result.answer)]
                if scenario.confirm:
                    calls += await _confirm_cards(db, env, identity, result.proposals,
                                                  frozen)
                if turn_no < scenario.max_turns:  # the visitor's last word would go unanswered
                    text = await visitor_says(visitor, item, conversation, visitor_spent)
            end_state = await count_end_state(db, scenario.end_state)
        transcript = Transcript(
            answer=conversation[-1]["content"] if conversation else "", tool_calls=calls,
            qr_hints=qr_hints, turns=sent, end_state=end_state, messages=messages)
        spent = Usage()
        for u in visitor_spent:
            spent = spent + u
        return Execution(transcript, usage, int((time.perf_counter() - started) * 1000),
                         timings={"database_clone_ms": int(clone_s * 1000)},
                         visitor_usage=spent)


async def _confirm_cards(db: Database, env: EvalEnv, identity: Identity | None,
                         cards: list[dict[str, Any]], frozen: FrozenResponder
                         ) -> list[ToolCall]:
    """The visitor presses Confirm on every card: the web route's own code path, except for a
    card a frozen response proposed with `on_confirm` (it has no row to apply: the frozen
    state moves instead)."""
    done = []
    for card in cards:
        args = {"proposal_id": card["proposal_id"]}
        confirmed = frozen.confirm(str(card["proposal_id"]))
        if confirmed is not None:
            done.append(ToolCall(name="confirm_card", arguments=args, result=confirmed,
                                 kind="confirm", outcome="ok"))
            continue
        try:
            result = await decide_proposal(db, env.settings, identity, card["proposal_id"],
                                           confirm=True)
            done.append(ToolCall(name="confirm_card", arguments=args, result=as_json(result),
                                 kind="confirm", outcome="ok"))
        except ProposalError as exc:
            done.append(ToolCall(name="confirm_card", arguments=args,
                                 result={"error": str(exc)}, kind="confirm",
                                 error="tool_error", outcome="error"))
    return done


def _where(state: EndState) -> tuple[str, list[Any]]:
    columns = SELECTABLE[state.table]
    clauses: list[str] = []
    params: list[Any] = []
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


async def count_end_state(db: Database, states: tuple[EndState, ...]) -> dict[str, int]:
    """Each end-state selector's matching rows in the conversation's database (tables and
    columns come from SELECTABLE, checked at load; values are parameters), keyed by the
    selector as the end_state check names it."""
    out = {}
    for state in states:
        where, params = _where(state)
        row = await db.fetchone(f"SELECT count(*) AS n FROM {state.table} t WHERE {where}",
                                tuple(params))
        out[state.describe()] = int(row["n"]) if row else 0
    return out
