"""Scenarios: the loader's errors, the simulated visitor, frozen tool responses, databases of
their own, end-state selectors, confirmation through the real path, and the verdict rules."""

import asyncio
import textwrap

import psycopg
import pytest

from app.capabilities import REGISTRY
from evals.execute.conversation import (
    STOP,
    ScenarioItem,
    conversation_database,
    scenario_items,
    visitor_says,
)
from evals.execute.executors import AppTurn, EndpointTurn
from evals.execute.runner import JudgeSetup, attempt, run_suite
from evals.judge.trust import Trust
from evals.load.scenarios import STYLES, ScenarioFileError, load_scenarios
from evals.record.results import classify
from tests.fakes import ScriptedModel, call, say

READ_PAGE = REGISTRY.tool("read_page").contract()


def write(tmp_path, text, name="s.yaml"):
    (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


MINIMAL = """\
- id: one
  visitor: {who: a student, wants: to find a printer}
  criteria:
    - statement: The assistant names the Form 4.
"""


def item_of(tmp_path, text, style="calm", visitor=None):
    scenarios, shared = load_scenarios(write(tmp_path, text))
    [item] = [i for i in scenario_items(scenarios, shared, full=True, visitor_model=visitor)
              if i.style == style]
    return item


# --- the loader ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: [grumpy]"),
     "s.yaml:3: unknown style 'grumpy'"),
    (MINIMAL + "  max_turns: 40\n", "s.yaml:5: max_turns: Input should be less than or equal"),
    (MINIMAL + "  expect_actions:\n    - tool: launch_rocket\n",
     "expect_actions: 'launch_rocket' is not a tool offered here"),
    (MINIMAL + "  expect_actions:\n    - tool: update_ticket\n",
     "'update_ticket' is not a tool offered here"),  # staff only; this visitor is anonymous
    (MINIMAL + "  expect_actions:\n    - tool: report_issue\n      arguments: {colour: red}\n",
     "report_issue arguments: unknown field 'colour'"),
    (MINIMAL + "  end_state:\n    - table: secrets\n", "end_state: unknown table 'secrets'"),
    (MINIMAL + "  end_state:\n    - table: tickets\n      where: {password: x}\n",
     "tickets where: unknown field 'password'"),
    (MINIMAL + "  tool_responses:\n    teleport: {contract: '000000000000', response: {}}\n",
     "tool_responses: unknown tool 'teleport'"),
    (MINIMAL + f"  tool_responses:\n    read_page: {{contract: {READ_PAGE},"
     " response: {url: x}}\n", "read_page response 1 does not fit the result schema: text:"
     " Field required"),
    (MINIMAL + "  tool_responses:\n    read_page: {contract: 0123456789ab,"
     " response: {url: x, text: y}}\n",
     f"read_page: its contract changed since these responses were written (was 0123456789ab,"
     f" now {READ_PAGE})"),
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: []"),
     "styles: List should have at least 1 item"),
    (MINIMAL.replace("to find a printer}", "to find a printer}\n  styles: [calm, calm]"),
     "style 'calm' is listed twice"),
    (MINIMAL + "  end_state:\n    - table: tickets\n      where: {status: no}\n",
     "tickets where: status needs text or null, not False (quote it)"),
    ("- id: two\n  visitor: {who: a student, wants: x y z}\n",
     "a scenario needs criteria, expect_actions or end_state"),
    ("- id: Bad_Id\n  visitor: {who: a student, wants: x y z}\n  criteria: []\n",
     "s.yaml:1: id: String should match pattern"),
])
def test_each_malformed_scenario_is_a_file_line_error(tmp_path, text, message):
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(write(tmp_path, text))
    assert any(message in line for line in err.value.errors), err.value.errors


def test_a_shared_criterion_naming_an_unknown_scenario_is_an_error(tmp_path):
    write(tmp_path, MINIMAL)
    write(tmp_path, "- statement: Be kind.\n  applies_to: [one, ghost]\n", "criteria.yaml")
    with pytest.raises(ScenarioFileError, match="criteria.yaml:2: applies_to: unknown"
                                                " scenario 'ghost'"):
        load_scenarios(tmp_path)


def test_shared_criteria_apply_where_they_say_and_the_shipped_set_loads(tmp_path):
    write(tmp_path, MINIMAL + MINIMAL.replace("id: one", "id: other"))
    write(tmp_path, "- statement: Be kind.\n  enforcement: informational\n  applies_to: [one]\n"
                    "- statement: Invent nothing.\n  applies_to: all\n", "criteria.yaml")
    items = {i.id: i for i in scenario_items(*load_scenarios(tmp_path), full=False,
                                             visitor_model=None)}
    assert [c.statement for c in items["one@calm"].criteria] == [
        "The assistant names the Form 4.", "Be kind.", "Invent nothing."]
    assert [c.statement for c in items["other@calm"].criteria] == [
        "The assistant names the Form 4.", "Invent nothing."]
    shipped, _ = load_scenarios()
    assert len(shipped) >= 12
    quick = scenario_items(*load_scenarios(), full=False, visitor_model=None)
    full = scenario_items(*load_scenarios(), full=True, visitor_model=None)
    assert {i.style for i in quick} == {"calm"} and len(full) > len(quick)


# --- the visitor ---------------------------------------------------------------------------


async def test_styles_change_how_the_visitor_writes_never_what_it_wants(tmp_path):
    prompts = {}
    for style in STYLES:
        visitor = ScriptedModel(say("hello"))
        item = item_of(tmp_path, MINIMAL, style, visitor)
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
    assert await visitor_says(visitor, item_of(tmp_path, MINIMAL, visitor=visitor), []) == said


async def test_the_visitor_sees_the_conversation_from_its_side_and_can_stop(tmp_path):
    visitor = ScriptedModel(say(STOP))
    item = item_of(tmp_path, MINIMAL, visitor=visitor)
    said = await visitor_says(visitor, item, [{"role": "user", "content": "hi"},
                                              {"role": "assistant", "content": "Hello!"}])
    sent = visitor.requests[0]["messages"]
    assert said is None
    assert [m["role"] for m in sent[1:]] == ["assistant", "user"]  # roles swapped


# --- conversations, for real ---------------------------------------------------------------


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
    item = item_of(tmp_path, REPORT, visitor=visitor)
    before = await env.db.fetchone("SELECT count(*) AS n FROM tickets")
    [result] = await run_suite(env, [item], filing_model())
    a = result.attempts[0]
    assert result.status == "PASS", [c.reason for c in a.checks]
    assert [t["role"] for t in a.turns] == ["user", "assistant"] * 2
    assert a.turns[0]["content"] == "the laser smells of smoke"
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
    item = item_of(tmp_path, REPORT, visitor=visitor)
    [result] = await run_suite(env, [item], ScriptedModel(say("Sorry to hear that."),
                                                          repeat=True))
    reasons = {c.kind.split(" ")[0]: c.reason for c in result.attempts[0].checks
               if not c.passed}
    assert result.status == "FAIL"
    assert reasons["expect_action"] == "report_issue never ran successfully"
    assert reasons["end_state"] == "0 matching row(s) in tickets"


async def test_two_conversations_at_once_do_not_see_each_others_rows(env, tmp_path):
    async def one():
        async with conversation_database(env) as (db, _):
            await db.execute("INSERT INTO tickets (machine_id, title) SELECT id, 'mine'"
                             " FROM machines LIMIT 1")
            await asyncio.sleep(0.05)
            row = await db.fetchone("SELECT count(*) AS n FROM tickets WHERE title = 'mine'")
            return row["n"]

    assert await asyncio.gather(one(), one()) == [1, 1]
    # and only one database is made ahead for the next conversation, not one per conversation
    ahead = await env.next_clone
    async with await psycopg.AsyncConnection.connect(env.server_conninfo) as conn:
        cur = await conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                                 (f"eval\\_p{__import__('os').getpid()}\\_conv\\_%",))
        assert [r[0] for r in await cur.fetchall()] == [ahead]


async def test_the_clone_is_dropped_after_an_error(env):
    name = None
    with pytest.raises(RuntimeError, match="boom"):
        async with conversation_database(env) as (db, _):
            name = db.conninfo
            raise RuntimeError("boom")
    dbname = psycopg.conninfo.conninfo_to_dict(name)["dbname"]
    async with await psycopg.AsyncConnection.connect(env.server_conninfo) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,))
        assert await cur.fetchone() is None


FROZEN = f"""\
- id: page
  context: {{as: staff, page: tool, toolId: form-4, curate: true}}
  visitor: {{who: staff, wants: the build volume}}
  opening: read the spec page
  max_turns: 1
  tool_responses:
    read_page:
      contract: {READ_PAGE}
      responses: [{{url: "https://x.example", text: "Build volume 200 mm"}}, {{error: "gone"}}]
      exhausted: error
  expect_actions:
    - tool: read_page
      result: {{text_contains: "200 mm"}}
"""


async def test_frozen_responses_answer_in_order_then_as_the_exhaustion_rule_says(env, tmp_path):
    model = ScriptedModel(*[call("read_page", url="https://x.example")] * 3, say("200 mm."))
    item = item_of(tmp_path, FROZEN, visitor=ScriptedModel(say(STOP)))
    [result] = await run_suite(env, [item], model)
    results = [c["result"] for c in result.attempts[0].tool_calls]
    assert results == [{"url": "https://x.example", "text": "Build volume 200 mm"},
                       {"error": "gone"},
                       {"error": "read_page has no further response in this test"}]
    assert result.status == "PASS"


async def test_a_live_tool_without_a_frozen_response_never_reaches_the_network(env, tmp_path,
                                                                                monkeypatch):
    import app.capabilities.read_page as read_page

    async def no_network(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(read_page, "fetch_page", no_network)
    text = FROZEN.replace(FROZEN[FROZEN.index("  tool_responses:"):FROZEN.index(
        "  expect_actions:")], "")
    item = item_of(tmp_path, text, visitor=ScriptedModel(say(STOP)))
    [result] = await run_suite(env, [item], ScriptedModel(call("read_page", url="https://a.b"),
                                                          say("I could not read it.")))
    [c] = result.attempts[0].tool_calls
    assert c["result"] == {"error": "the web cannot be read in this test"}


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
    [result] = await run_suite(env, [item_of(tmp_path, CONFIRM,
                                             visitor=ScriptedModel(say(STOP)))], model)
    calls = result.attempts[0].tool_calls
    assert [c["name"] for c in calls] == ["update_ticket", "confirm_card"]
    assert calls[1]["result"]["status"] == "applied"
    assert result.status == "PASS", [c.reason for c in result.attempts[0].checks]
    without = CONFIRM.replace("confirm: true", "confirm: false")
    model = ScriptedModel(call("update_ticket", ticket_id=ticket["id"], status="resolved"),
                          say("Confirm the card."))
    [unconfirmed] = await run_suite(env, [item_of(tmp_path, without,
                                                  visitor=ScriptedModel(say(STOP)))], model)
    assert unconfirmed.status == "FAIL"  # proposed only: the ticket is still open


# --- verdicts ------------------------------------------------------------------------------


class Judge:
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
    item = item_of(tmp_path, CRITERIA, visitor=ScriptedModel(say(STOP)))
    [result] = await run_suite(env, [item], ScriptedModel(say("The Form 4.")), judge=judge)
    checks = result.attempts[0].checks
    assert result.status == status
    assert [c.required for c in checks if c.kind.startswith("criterion")] == [True, False]


# --- one seam, three executors -------------------------------------------------------------


async def test_the_three_executors_hand_the_runner_the_same_transcript_shape(env, tmp_path):
    from evals.load.cases import load_cases, select

    case = select(load_cases(), "no-glowforge")[0]
    app = await AppTurn(case).run(env, ScriptedModel(say("We have no Glowforge.")))
    endpoint = await EndpointTurn(case).run(None, ScriptedModel(say("We have no Glowforge.")))
    scenario = await item_of(tmp_path, CRITERIA, visitor=ScriptedModel(say(STOP))
                             ).executor().run(env, ScriptedModel(say("The Form 4.")))
    for t in (app, endpoint, scenario):
        assert t.turns[-1] == {"role": "assistant", "content": t.answer}
        assert isinstance(t.tool_calls, list) and t.usage.completion_tokens >= 0
    judge = JudgeSetup(Judge({"Names the Form 4": True, "Is cheerful": True}),
                       Trust(True, "scripted"))
    item = item_of(tmp_path, CRITERIA, visitor=ScriptedModel(say(STOP)))
    done = await attempt(env, item, ScriptedModel(say("The Form 4.")), judge)
    assert classify([done]) == "PASS"


def test_a_scenario_item_is_scheduled_like_a_case(tmp_path):
    item = item_of(tmp_path, MINIMAL)
    assert isinstance(item, ScenarioItem) and item.id == "one@calm" and item.photos == ()
    assert item.content()["style"] == "calm"


async def test_repeat_last_answers_with_the_last_response_once_the_sequence_runs_out(
        env, tmp_path):
    text = FROZEN.replace("exhausted: error", "exhausted: repeat_last").replace(
        ', {{error: "gone"}}', "").replace(', {error: "gone"}', "")
    model = ScriptedModel(*[call("read_page", url="https://x.example")] * 3, say("200 mm."))
    [result] = await run_suite(env, [item_of(tmp_path, text,
                                             visitor=ScriptedModel(say(STOP)))], model)
    texts = [c["result"].get("text") for c in result.attempts[0].tool_calls]
    assert texts == ["Build volume 200 mm"] * 3


@pytest.mark.parametrize(("actual", "selectors", "misses"), [
    ({"slug": "Form-4"}, {"slug": "form-4"}, 0),                      # case-insensitive
    ({"description": "It SMOKED"}, {"description_contains": "smoke"}, 0),
    ({"reporter_name": None}, {"reporter_name": None}, 0),            # null: absent
    ({"reporter_name": "Jo"}, {"reporter_name": None}, 1),
    ({"filed": True}, {"filed": False}, 1),
    ({"ticket_id": 3}, {"ticket_id": 4}, 1),
    ("not a mapping", {"x": 1}, 1),
])
def test_selectors_match_as_documented(actual, selectors, misses):
    from evals.execute.conversation import matches

    assert len(matches(actual, selectors)) == misses


async def test_the_clone_made_ahead_is_dropped_with_the_environment(server_conninfo, tmp_path):
    from app.manuals.embed import HashEmbedder
    from app.settings import Settings
    from evals.execute.harness import eval_env

    async with eval_env(server_conninfo, Settings(data_dir=tmp_path), HashEmbedder()) as env:
        async with conversation_database(env) as (_, waited):
            assert waited >= 0
        async with conversation_database(env) as (_, waited_again):
            pass
        ahead = await env.next_clone
    async with await psycopg.AsyncConnection.connect(server_conninfo) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (ahead,))
        assert await cur.fetchone() is None


async def test_the_visitor_is_not_asked_for_a_word_nobody_would_answer(env, tmp_path):
    visitor = ScriptedModel(say("one more thing"), repeat=True)
    text = CRITERIA.replace("  criteria:", "  end_state:\n    - table: proposals\n"
                                           "      exists: false\n  criteria: []\n  x:")
    text = text[:text.index("  x:")]
    item = item_of(tmp_path, text, visitor=visitor)
    [result] = await run_suite(env, [item], ScriptedModel(say("The Form 4."), repeat=True))
    assert len(result.attempts[0].turns) == 2 and visitor.requests == []  # max_turns: 1


async def test_a_visitor_that_never_opens_is_an_error_not_the_assistants_fail(env, tmp_path):
    text = MINIMAL  # no opening: the visitor writes the first message, here only STOP
    item = item_of(tmp_path, text, visitor=ScriptedModel(say(STOP), repeat=True))
    model = ScriptedModel(say("The Form 4."), repeat=True)
    [result] = await run_suite(env, [item], model)
    assert result.status == "ERROR" and model.requests == []
    assert "the simulated visitor wrote no first message" in result.attempts[0].error


async def test_contains_matches_the_text_itself_not_sql_wildcards(env):
    from evals.execute.conversation import end_state_checks
    from evals.load.scenarios import EndState

    async with conversation_database(env) as (db, _):
        await db.execute("INSERT INTO tickets (machine_id, title, body) SELECT id, 'x',"
                         " 'cut at 100 percent' FROM machines LIMIT 1")
        found = await end_state_checks(db, (
            EndState(table="tickets", where={"body_contains": "100%"}),
            EndState(table="tickets", where={"body_contains": "cut_at"}),
            EndState(table="tickets", where={"body_contains": "100 PERCENT"})))
    assert [c.passed for c in found] == [False, False, True]


async def test_a_stopped_run_asks_the_visitor_nothing_more(env, tmp_path):
    import asyncio as aio

    from evals.execute.runner import Variant, run_variants

    stop = aio.Event()
    visitor = ScriptedModel(say("and another thing"), repeat=True)

    def answer_then_stop(messages, tools):
        stop.set()  # Ctrl-C arrives while the assistant answers
        return say("The Form 4.")

    item = item_of(tmp_path, CRITERIA.replace("max_turns: 1", "max_turns: 3"),
                   visitor=visitor)
    results = await run_variants(env, [item], [Variant("v", ScriptedModel(answer_then_stop))],
                                 stop=stop)
    assert visitor.requests == [] and results["v"] == []  # unfinished, not a verdict
