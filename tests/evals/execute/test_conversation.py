"""Scenario conversations: the simulated visitor, databases of their own, confirmation through
the real path, the verdict rules, and one seam with the case executors (frozen tool responses:
test_responses.py)."""

import psycopg
import pytest

from app.chat.declared import Declared
from evals.checks.scenario import EndState
from evals.execute.attempt import attempt
from evals.execute.conversation import (
    STOP,
    ScenarioConversation,
    count_end_state,
    repeatable_ids,
    visitor_says,
)
from evals.execute.env import conversation_database
from evals.execute.executors import AppTurn, EndpointTurn, Setup
from evals.execute.runner import Variant, run_suite, run_variants
from evals.judge.setup import JudgeSetup
from evals.judge.trust import Trust
from evals.load.cases import load_cases
from evals.load.scenarios import STYLES
from evals.record.results import classify
from evals.record.transcript import Turn
from tests.evals.helpers import select
from tests.evals.load.helpers import MINIMAL, item_of
from tests.fakes import ScriptedModel, call, say


async def test_styles_change_how_the_visitor_writes_never_what_it_wants(tmp_path):
    prompts = {}
    assert len(STYLES) >= 2
    for style in STYLES:
        visitor = ScriptedModel(say("hello"))
        item = item_of(tmp_path, MINIMAL, style)
        await visitor_says(visitor, item, [])
        prompts[style] = visitor.requests[0]["messages"][0]["content"]
    calm = prompts["calm"]
    for style, prompt in prompts.items():
        assert prompt.replace(STYLES[style], STYLES["calm"]) == calm
        assert "to find a printer" in prompt
        assert "names the Form 4" not in prompt  # the criteria are never shown to the visitor


@pytest.mark.parametrize(("reply", "said"), [
    (STOP, None), ("Thanks, that is all. STOP", None), ("", None),
    ("the laser stopped, please stop it", "the laser stopped, please stop it"),
])
async def test_the_visitor_stops_with_the_word_in_capitals(tmp_path, reply, said):
    visitor = ScriptedModel(say(reply))
    assert await visitor_says(visitor, item_of(tmp_path, MINIMAL), []) == said


async def test_the_visitor_sees_the_conversation_from_its_side_and_can_stop(tmp_path):
    visitor = ScriptedModel(say(STOP))
    item = item_of(tmp_path, MINIMAL)
    said = await visitor_says(visitor, item, [{"role": "user", "content": "hi"},
                                              {"role": "assistant", "content": "Hello!"}])
    sent = visitor.requests[0]["messages"]
    assert said is None
    assert [m["role"] for m in sent[1:]] == ["assistant", "user"]  # roles swapped


REPORT = """\
- id: smoke
  context: {page: tool, toolId: trotec-speedy-400}
  visitor: {who: a student, wants: to report smoke}
  opening: the laser smells of smoke
  max_turns: 3
  expect_actions:
    - tool: report_issue
      arguments: {slug: trotec-speedy-400, description_contains: smoke}
      result: {filed: true}
  end_state:
    - table: tickets
      where: {machine: trotec-speedy-400, body_contains: smoke, status: open,
              reporter_name: null}
    - table: proposals
      exists: false
"""


def filing_model():
    return ScriptedModel(
        call("report_issue", slug="trotec-speedy-400", title="Smoke from the laser",
             description="It smelled of smoke and stopped."),
        say("I have filed the report."), say("You are welcome."))


async def test_a_conversation_writes_for_real_in_its_own_database(env, tmp_path):
    visitor = ScriptedModel(say("thanks"), say(STOP))
    item = item_of(tmp_path, REPORT)
    before = await env.db.fetchone("SELECT count(*) AS n FROM tickets")
    [result] = await run_suite(env, [item], filing_model(), visitor=visitor)
    a = result.attempts[0]
    assert result.status == "PASS", [c.reason for c in a.checks]
    assert [t.role for t in a.turns] == ["user", "assistant"] * 2
    assert a.turns[0].content == "the laser smells of smoke"
    assert 0 < a.timings["database_clone_ms"] < 10_000
    from evals.report.console import case_line, conversation_lines

    assert case_line(result) == "  PASS      smoke@calm  (2 visitor turns)"
    [line] = conversation_lines([result])
    assert line.startswith("conversations: 1 · visitor turns 2 (mean 2.0, max 2) · assistant"
                           " tokens 45 · visitor tokens 30") and "database clone median" in line
    # the run's own database never saw the ticket: it was written in the clone, now dropped
    assert await env.db.fetchone("SELECT count(*) AS n FROM tickets") == before
    # the conversation's clone is gone; the one left is made ahead for the next conversation
    ahead = await env.next_clone
    async with await psycopg.AsyncConnection.connect(env.server_conninfo) as conn:
        cur = await conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                 (f"eval\\_p{__import__('os').getpid()}\\_conv\\_%",))
        assert [r[0] for r in await cur.fetchall()] == [ahead]


async def test_missing_actions_and_state_fail_with_their_reasons(env, tmp_path):
    visitor = ScriptedModel(say(STOP))
    item = item_of(tmp_path, REPORT)
    [result] = await run_suite(env, [item], ScriptedModel(say("Sorry to hear that."),
                                                          repeat=True), visitor=visitor)
    reasons = {c.kind.split(" ")[0]: c.reason for c in result.attempts[0].checks
               if not c.passed}
    assert result.status == "FAIL"
    assert reasons["expect_action"] == "report_issue never ran successfully"
    assert reasons["end_state"] == "0 matching row(s) in tickets"


CONFIRM = """\
- id: resolve
  context: {as: staff, path: /staff/tickets}
  visitor: {who: staff, wants: to close the plywood ticket}
  opening: close the plywood ticket, the lens is clean
  max_turns: 1
  confirm: true
  end_state:
    - table: tickets
      where: {title: "Cuts not going through 3 mm plywood", status: resolved}
    - table: proposals
      where: {tool: update_ticket, status: applied}
"""


async def test_confirm_true_confirms_cards_through_the_web_routes_code(env, tmp_path):
    ticket = await env.db.fetchone("SELECT id FROM tickets WHERE title = %s",
                                   ("Cuts not going through 3 mm plywood",))
    model = ScriptedModel(call("update_ticket", ticket_id=ticket["id"], status="resolved"),
                          say("Confirm the card to resolve it."))
    [result] = await run_suite(env, [item_of(tmp_path, CONFIRM)], model,
                               visitor=ScriptedModel(say(STOP)))
    calls = result.attempts[0].tool_calls
    assert [c.name for c in calls] == ["update_ticket", "confirm_card"]
    assert calls[1].result_map["status"] == "applied"
    assert result.status == "PASS", [c.reason for c in result.attempts[0].checks]
    without = CONFIRM.replace("confirm: true", "confirm: false")
    model = ScriptedModel(call("update_ticket", ticket_id=ticket["id"], status="resolved"),
                          say("Confirm the card."))
    [unconfirmed] = await run_suite(env, [item_of(tmp_path, without)], model,
                                    visitor=ScriptedModel(say(STOP)))
    assert unconfirmed.status == "FAIL"  # proposed only: the ticket is still open


async def test_a_proposal_has_the_same_id_in_every_run_of_a_conversation(env, tmp_path):
    import uuid

    ticket = await env.db.fetchone("SELECT id FROM tickets WHERE title = %s",
                                   ("Cuts not going through 3 mm plywood",))
    ids = []
    for _ in range(2):
        model = ScriptedModel(call("update_ticket", ticket_id=ticket["id"], status="resolved"),
                              say("Confirm the card to resolve it."))
        [result] = await run_suite(env, [item_of(tmp_path, CONFIRM)], model,
                                   visitor=ScriptedModel(say(STOP)))
        ids.append(result.attempts[0].tool_calls[0].result_map["proposal_id"])
    assert ids[0] == ids[1] and uuid.UUID(ids[0])  # what the model reads never differs
    other = repeatable_ids("another-conversation")()
    assert other != ids[0] and repeatable_ids("another-conversation")() == other


class Judge(Declared):
    """A scripted judge: the verdict per criterion statement."""

    def __init__(self, verdicts):
        self.model_id = "scripted/judge"
        self.verdicts = verdicts

    async def complete(self, messages, tools=None, **kw):
        import json

        prompt = messages[-1]["content"]
        ok = next(v for s, v in self.verdicts.items() if s in prompt)
        return say(json.dumps({"reason": "scripted", "verdict": "pass" if ok else "fail"}))


CRITERIA = """\
- id: judged
  visitor: {who: a student, wants: a printer}
  opening: which printer prints resin?
  max_turns: 1
  criteria:
    - statement: Names the Form 4.
    - statement: Is cheerful.
      enforcement: informational
"""


@pytest.mark.parametrize(("named", "cheerful", "trusted", "status"), [
    (True, False, True, "PASS"),       # an informational criterion never counts
    (False, True, True, "FAIL"),       # a required one does
    (True, True, False, "UNDECIDED"),  # an untrusted judge's verdicts are advisory
])
async def test_required_criteria_decide_informational_ones_are_reported(
        env, tmp_path, named, cheerful, trusted, status):
    judge = JudgeSetup(Judge({"Names the Form 4": named, "Is cheerful": cheerful}),
                       Trust(trusted, "scripted"))
    item = item_of(tmp_path, CRITERIA)
    [result] = await run_suite(env, [item], ScriptedModel(say("The Form 4.")), judge=judge,
                               visitor=ScriptedModel(say(STOP)))
    checks = result.attempts[0].checks
    assert result.status == status
    assert [c.required for c in checks if c.kind.startswith("criterion")] == [True, False]


async def test_the_three_executors_hand_the_runner_the_same_transcript_shape(env, tmp_path):
    case = select(load_cases(), "no-glowforge")[0]
    app = await AppTurn().run(case, Setup(env, ScriptedModel(say("We have no Glowforge."))))
    endpoint = await EndpointTurn().run(case, Setup(None, ScriptedModel(
        say("We have no Glowforge."))))
    scenario = await ScenarioConversation().run(item_of(tmp_path, CRITERIA), Setup(
        env, ScriptedModel(say("The Form 4.")), ScriptedModel(say(STOP))))
    for done in (app, endpoint, scenario):
        t = done.transcript
        assert t.turns[-1] == Turn(role="assistant", content=t.answer)
        assert done.usage.completion_tokens == 5
    judge = JudgeSetup(Judge({"Names the Form 4": True, "Is cheerful": True}),
                       Trust(True, "scripted"))
    item = item_of(tmp_path, CRITERIA)
    done = await attempt(item, Setup(env, ScriptedModel(say("The Form 4.")),
                                     ScriptedModel(say(STOP))), judge)
    assert classify([done]) == "PASS"


async def test_the_visitor_is_not_asked_for_a_word_nobody_would_answer(env, tmp_path):
    visitor = ScriptedModel(say("one more thing"), repeat=True)
    text = CRITERIA.replace("  criteria:", "  end_state:\n    - table: proposals\n"
                                           "      exists: false\n  criteria: []\n  x:")
    text = text[:text.index("  x:")]
    item = item_of(tmp_path, text)
    [result] = await run_suite(env, [item], ScriptedModel(say("The Form 4."), repeat=True),
                               visitor=visitor)
    assert len(result.attempts[0].turns) == 2 and visitor.requests == []  # max_turns: 1


async def test_a_visitor_that_never_opens_is_an_error_not_the_assistants_fail(env, tmp_path):
    text = MINIMAL  # no opening: the visitor writes the first message, here only STOP
    item = item_of(tmp_path, text)
    model = ScriptedModel(say("The Form 4."), repeat=True)
    [result] = await run_suite(env, [item], model,
                               visitor=ScriptedModel(say(STOP), repeat=True))
    assert result.status == "ERROR" and model.requests == []
    assert "the simulated visitor wrote no first message" in result.attempts[0].error


async def test_contains_matches_the_text_itself_not_sql_wildcards(env):
    states = (EndState(table="tickets", where={"body_contains": "100%"}),
              EndState(table="tickets", where={"body_contains": "cut_at"}),
              EndState(table="tickets", where={"body_contains": "100 PERCENT"}))
    async with conversation_database(env) as (db, _):
        await db.execute("INSERT INTO tickets (machine_id, title, body) SELECT id, 'x',"
                         " 'cut at 100 percent' FROM machines LIMIT 1")
        found = await count_end_state(db, states)
    assert [found[s.describe()] for s in states] == [0, 0, 1]


async def test_a_stopped_run_asks_the_visitor_nothing_more(env, tmp_path):
    import asyncio as aio

    stop = aio.Event()
    visitor = ScriptedModel(say("and another thing"), repeat=True)

    def answer_then_stop(messages, tools):
        stop.set()  # Ctrl-C arrives while the assistant answers
        return say("The Form 4.")

    item = item_of(tmp_path, CRITERIA.replace("max_turns: 1", "max_turns: 3"))
    results = await run_variants(env, [item], [Variant("v", ScriptedModel(answer_then_stop))],
                                 visitor=visitor, stop=stop)
    assert visitor.requests == [] and results["v"] == []  # unfinished, not a verdict


async def test_a_frozen_agent_is_told_what_it_was_told_then_in_every_turn(env, tmp_path):
    from evals.execute.agent import all_contexts

    item = item_of(tmp_path, REPORT)
    [then] = (await all_contexts(env, [item])).values()
    for schema in then.tools:
        if schema["function"]["name"] == "report_issue":
            schema["function"]["description"] = "File a ticket (as described then)."
    frozen = {item.context.key: then.model_copy(update={"system_prompt": "Told then."})}
    model = filing_model()
    results = await run_variants(env, [item], [Variant("baseline", model, frozen=frozen)],
                                 visitor=ScriptedModel(say("thanks"), say(STOP)))
    [result] = results["baseline"]
    assert [r["messages"][0]["content"] for r in model.requests] == ["Told then."] * 3
    told = {t["function"]["name"]: t["function"]["description"] for t in model.requests[0]["tools"]}
    assert told["report_issue"] == "File a ticket (as described then)."
    # Its tools run as today's do in a conversation: the ticket is written, in its database.
    assert result.status == "PASS", [c.reason for c in result.attempts[0].checks]


async def test_a_visitor_that_broke_role_makes_the_conversation_undecided(env, tmp_path):
    """The assistant fails the scenario's checks, but its visitor spoke as an assistant: the
    verdict is UNDECIDED, with the visitor's failure and its turn, and counted apart."""
    visitor = ScriptedModel(say("Sure! How can I help you today?"), say(STOP))
    item = item_of(tmp_path, REPORT)
    [result] = await run_suite(env, [item], ScriptedModel(say("Sorry to hear that."),
                                                          repeat=True), visitor=visitor)
    first = result.attempts[0]
    assert result.status == "UNDECIDED"
    assert first.visitor is not None and [(f.kind, f.turn) for f in first.visitor.failures] \
        == [("broke_role", 2)]
    assert any(not c.passed for c in first.checks)  # what the checks said stays recorded
    from evals.report.console import detail_block, visitor_lines

    assert ("? undecided: the visitor broke role at turn 2: “How can I help you”"
            in detail_block(result))
    assert visitor_lines([result]) == [
        "simulated visitor: 1 of 1 conversation attempts failed (broke role 1) · not"
        " checked: gave up before its goal, agreed to what it was told to refuse"]
