import pytest

from app.chat.declared import Declared
from evals.execute.agent import FrozenAgentError, agent_info, all_contexts
from evals.execute.session import Prepared, Version, run_versions
from evals.record.fingerprint import FrozenContext
from tests.evals.execute.helpers import SETTINGS, cases, plan, run
from tests.fakes import ScriptedModel, say


async def test_a_frozen_agent_is_run_as_it_was_told(env, store, settings):
    cs = cases("no-glowforge")
    key = cs[0].context.key
    contexts = await all_contexts(env, cs)
    old = contexts[key].model_copy(update={"system_prompt": "OLD PROMPT"})
    old.tools[0]["function"]["description"] = "OLD DESCRIPTION"
    frozen = agent_info("scripted/fake", SETTINGS, {key: FrozenContext(**old.model_dump())})
    baseline = ScriptedModel(say("We don't have a Glowforge."))
    current = ScriptedModel(say("We don't have a Glowforge."))
    await run(Prepared(env, store, settings), cs,
              [Version("baseline", baseline, frozen), Version("current", current)], plan(cs),
              concurrency=2)
    sent = baseline.requests[0]
    assert sent["messages"][0]["content"] == "OLD PROMPT"
    assert sent["tools"][0]["function"]["description"] == "OLD DESCRIPTION"
    assert current.requests[0]["messages"][0]["content"] != "OLD PROMPT"


async def test_a_frozen_agent_whose_tool_is_gone_is_refused(env, store, settings):
    cs = cases("no-glowforge")
    ctx = FrozenContext(system_prompt="x", tools=[
        {"type": "function", "function": {"name": "removed_tool", "description": "d",
                                          "parameters": {}}}])
    frozen = agent_info("scripted/fake", SETTINGS, {cs[0].context.key: ctx})
    with pytest.raises(FrozenAgentError, match="'removed_tool' no longer exists"):
        await run(Prepared(env, store, settings), cs,
                  [Version("baseline", ScriptedModel(), frozen)], plan(cs))
    assert await store.list_runs() == []  # the refusal happened before any run was stored


async def test_a_run_whose_database_freezes_stops_in_bounded_time_saying_why(
        server_conninfo, store, settings, monkeypatch, capsys):
    import asyncio
    import os
    import time

    import psycopg

    from app.embed import HashEmbedder
    from evals.execute import env as env_module
    from evals.execute import session
    from evals.execute.env import eval_env
    from tests.pg_proxy import pg_proxy

    monkeypatch.setattr(session, "WATCH_EVERY_S", 0.1)
    monkeypatch.setattr(session, "WATCH_TIMEOUT_S", 0.3)
    monkeypatch.setattr(env_module, "ADMIN_CONNECT_S", 0.5)
    monkeypatch.setattr(env_module, "ADMIN_TIMEOUT_S", 1.0)
    monkeypatch.setattr(env_module, "ENV_TIMEOUT_S", 1.0)
    cs = cases("honest-absence,lab-identity")

    class Slow(Declared):
        model_id = "scripted/fake"

        def __init__(self, proxy):
            self.proxy, self.calls = proxy, 0

        async def complete(self, messages, tools=None, **kw):
            self.calls += 1
            if self.calls == 2:
                self.proxy.freeze()  # as SIGSTOP on every process of the server
            await asyncio.sleep(0.3)
            return say("We don't have that machine here.")

    async def body(proxy):
        async with eval_env(proxy.conninfo, settings, HashEmbedder()) as env:
            return await run(Prepared(env, store, settings), cs,
                             [Version("current", Slow(proxy))], plan(cs))

    started = time.monotonic()
    try:
        async with pg_proxy(server_conninfo) as proxy:
            records = await asyncio.wait_for(body(proxy), 60)
    finally:
        with psycopg.connect(server_conninfo, autocommit=True) as admin:
            for (name,) in admin.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s",
                    (f"eval\\_p{os.getpid()}\\_%",)).fetchall():
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    took = time.monotonic() - started
    record = records["current"]
    assert record.status == "interrupted" and record.unfinished, record.status
    err = capsys.readouterr().err
    assert "does not answer" in err and "stopping the run" in err and "Traceback" not in err
    assert "was not dropped" in err  # the teardown says so in one line, bounded too
    assert took < 40


async def test_a_database_failure_between_items_stops_the_run_keeping_what_finished(
        env, store, settings, monkeypatch, capsys):
    from evals.execute.env import EvalEnv

    async def frozen(self, catalog):
        raise TimeoutError

    monkeypatch.setattr(EvalEnv, "use_catalog", frozen)
    cs = cases("no-glowforge,photo-studio-form4")  # the second runs on the look-alike lab
    model = ScriptedModel(say("We don't have a Glowforge."), repeat=True)
    records = await run(Prepared(env, store, settings), cs, [Version("current", model)],
                        plan(cs))
    record = records["current"]
    assert record.status == "interrupted" and record.unfinished == ["photo-studio-form4#1"]
    assert [r.id for r in record.cases] == ["no-glowforge"]
    err = capsys.readouterr().err
    assert "error: the run's database failed (no answer within 10 s): the run stops here" in err
    assert (await store.load_run(record.run_id)).status == "interrupted"


async def test_an_artifact_that_cannot_be_written_is_said_and_the_store_still_gets_each_case(
        env, store, settings, tmp_path, capsys):
    from evals.execute.session import run_versions
    from evals.record.run import Models, RunSettings

    (tmp_path / "a-file").write_text("")
    bad = tmp_path / "a-file" / "run.json"  # its folder is a file
    cs = cases()
    model = ScriptedModel(say("We don't have a Glowforge."), repeat=True)
    records = await run_versions(Prepared(env, store, settings), cs, [Version("current", model)],
                                 plan(cs), settings=RunSettings(concurrency=1), models=Models(),
                                 vision=None, judge=None, artifact=bad)
    err = capsys.readouterr().err
    # at the start, and before each batch went to the store (the two cases in one or two)
    assert err.count(f"warning: the artifact {bad} was not written") in (2, 3)
    loaded = await store.load_run(records["current"].run_id)
    assert loaded.status == "complete" and len(loaded.cases) == 2


async def test_the_artifact_holds_every_case_of_a_batch_before_the_store_is_given_it(
        env, store, settings, tmp_path, monkeypatch):
    from evals.record import store as store_module
    from evals.record.artifact import read_run
    from evals.record.run import Models, RunSettings

    monkeypatch.setattr(store_module.writer, "WRITE_BATCH", 2)  # three batches of five
    path = tmp_path / "run.json"
    seen: list[tuple[set[str], set[str]]] = []
    write = store._write

    async def checked(batch):
        seen.append(({r.id for _, r in batch}, {c.id for c in read_run(path).cases}))
        return await write(batch)

    monkeypatch.setattr(store, "_write", checked)
    cs = cases("no-glowforge,no-cnc-router,no-vinyl-cutter,no-fdm-printer,laser-by-capability")
    model = ScriptedModel(say("We don't have that here."), repeat=True)
    records = await run_versions(Prepared(env, store, settings), cs, [Version("current", model)],
                                 plan(cs), settings=RunSettings(concurrency=5), models=Models(),
                                 vision=None, judge=None, artifact=path)
    assert sorted(i for batch, _ in seen for i in batch) == sorted(c.id for c in cs)
    assert all(batch <= written for batch, written in seen)
    assert len(seen) >= 3 and store.before_write is None
    assert len(records["current"].cases) == 5


async def test_the_composed_contexts_are_handed_over_before_the_first_model_call(
        env, store, settings):
    from evals.record.run import Models, RunSettings

    cs = cases()
    model = ScriptedModel(say("We don't have that."), repeat=True)
    seen = []

    async def on_composed(contexts):
        seen.append((sorted(contexts), len(model.requests)))

    await run_versions(Prepared(env, store, settings), cs, [Version("current", model)],
                       plan(cs), settings=RunSettings(concurrency=1), models=Models(),
                       vision=None, judge=None, on_composed=on_composed)
    assert seen == [(["anonymous / demo"], 0)]


async def test_an_auto_run_is_complete_when_every_item_is_decided_and_records_its_rule(
        env, store, settings):
    from evals.load.plan import plan_info
    from evals.record.repetitions import RepeatRule

    cs = cases()
    rule = RepeatRule(max=4)
    p = plan_info(cs, judge_model=None, judge_prompt_hash=None, repeat=4, repeat_rule=rule)
    model = ScriptedModel(say("We don't have a Glowforge or a CNC router."), repeat=True)
    records = await run(Prepared(env, store, settings), cs, [Version("current", model)], p)
    record = records["current"]
    # 2 of 4 passes already settle "passes" (2/4 = τ): two repetitions an item, not four
    assert record.status == "complete" and record.unfinished == []
    assert sorted((r.id, r.repetition) for r in record.cases) == [
        (c.id, n) for c in sorted(cs, key=lambda c: c.id) for n in (1, 2)]
    stored = await store.load_run(record.run_id)
    assert stored.plan.repeat_rule == rule and stored.plan.repeat == 4


def test_what_an_interrupted_item_still_owes():
    from evals.execute.session import owed
    from evals.load.plan import plan_info
    from evals.record.repetitions import RepeatRule

    cs = cases("no-glowforge")
    fixed = plan_info(cs, judge_model=None, judge_prompt_hash=None, repeat=3)
    auto = plan_info(cs, judge_model=None, judge_prompt_hash=None, repeat=5,
                     repeat_rule=RepeatRule(max=5))
    assert owed(fixed, {1: "PASS"}) == [2, 3]
    assert owed(auto, {}) == [1]
    assert owed(auto, {1: "PASS", 2: "FAIL"}) == [3]  # open: the next one only
    assert owed(auto, {1: "PASS", 2: "PASS", 3: "PASS"}) == []  # decided
    assert owed(auto, {1: "UNDECIDED"}) == []


def test_a_frozen_agent_without_a_scenario_s_context_is_refused_before_anything_runs():
    from evals.execute.agent import PlanMismatch
    from evals.execute.session import validate_versions
    from evals.load.conversations import conversations
    from evals.load.scenarios import load_scenarios

    scenarios, shared = load_scenarios()
    talk = next(c for c in conversations(scenarios, shared, full=False)
                if c.scenario.id == "staff-resolves-the-plywood-ticket")
    frozen = agent_info("scripted/fake", SETTINGS, {}, (None, False))
    with pytest.raises(PlanMismatch, match=f"baseline has no context for {talk.context.key}"
                                           f" \\(used by {talk.id}\\)") as caught:
        validate_versions([talk], [Version("baseline", ScriptedModel(), frozen)])
    assert caught.value.missing == {talk.context.key: [talk.id]}


async def test_a_pair_of_runs_records_what_says_why_an_item_moved(env, store, settings):
    from evals.report.compare import compare_runs

    cs = cases("no-glowforge")
    key = cs[0].context.key
    today = (await all_contexts(env, cs))[key]
    last = today.system_prompt.splitlines()[-1]
    old = today.model_copy(update={"system_prompt": today.system_prompt.replace(last, "OLD")})
    frozen = agent_info("scripted/fake", SETTINGS, {key: FrozenContext(**old.model_dump())})
    baseline = ScriptedModel(say("Yes, you can book the Glowforge tomorrow."))
    current = ScriptedModel(say("We don't have a Glowforge."))
    records = await run(Prepared(env, store, settings), cs,
                        [Version("baseline", baseline, frozen), Version("current", current)],
                        plan(cs))
    now = records["current"]
    assert [r.context for r in now.cases] == [key]
    fragments = now.agent.fragments_in(key)
    assert fragments is not None and last in list(fragments.values())[-1]
    [group] = compare_runs(records["baseline"], now).attribution
    assert group.improved == ["no-glowforge"] and group.contexts == [key]
    [changed] = group.change.prompt
    assert changed.capability == list(fragments)[-1]
    assert changed.diff[0] == "-OLD"


async def test_a_run_is_resumed_only_where_its_agent_is_told_as_it_began(
        env, store, settings, capsys, server_conninfo, tmp_path):
    from app.embed import HashEmbedder
    from app.settings import Settings
    from evals.execute.env import eval_env
    from evals.execute.session import AgentChanged
    from evals.record.run import Models, RunSettings
    from tests.evals.record.helpers import left_unfinished

    cs = cases("no-glowforge,large-lab-smaller-trotec")
    prep = Prepared(env, store, settings)
    model = ScriptedModel(say("We don't have it."), repeat=True)
    record = (await run(prep, cs, [Version("current", model)], plan(cs)))["current"]
    run_id = await left_unfinished(store, record, lambda c: c.id == "no-glowforge",
                                   status="interrupted")
    stopped = await store.load_run(run_id)

    def began_otherwise(key):
        """The stopped run as if its agent had been told something else in `key`."""
        told = stopped.agent.contexts[key].model_copy(update={"system_prompt": "OLD PROMPT"})
        agent = stopped.agent.model_copy(update={"contexts": {**stopped.agent.contexts,
                                                              key: told}})
        return stopped.model_copy(update={"agent": agent})

    async def resumed(began):
        """Resumed as the command does, in an environment of its own (seeded afresh)."""
        async with eval_env(server_conninfo, Settings(data_dir=tmp_path,
                                                      model_chat="scripted/fake"),
                            HashEmbedder()) as fresh:
            return await run_versions(Prepared(fresh, store, settings), cs,
                                      [Version("current", model)], stopped.plan,
                                      settings=RunSettings(), models=Models(), vision=None,
                                      judge=None, resume=began)

    demo, large = (next(c.context.key for c in cs if c.context.catalog == catalog)
                   for catalog in ("demo", "large"))
    model.requests.clear()
    # Told otherwise in a context of the first phase: refused before anything runs.
    with pytest.raises(AgentChanged, match=f"run {run_id} began with another agent: what the"
                                           f" assistant is told in {demo} has changed since"):
        await resumed(began_otherwise(demo))
    # In a later phase's: the run stops before that phase, resumable, saying why.
    again = (await resumed(began_otherwise(large)))["current"]
    assert model.requests == []
    assert again.status == "interrupted"
    assert again.unfinished == ["large-lab-smaller-trotec#1"]
    assert f"what the assistant is told in {large} has changed since" in capsys.readouterr().err
    # As it began: the rest runs, into the same run.
    done = (await resumed(stopped))["current"]
    assert (done.run_id, done.status, done.unfinished) == (run_id, "complete", [])
    asked = {str(r["messages"][-1]["content"]) for r in model.requests}
    assert asked == {"Which of the Trotec lasers is the smaller one? I only cut A4 sheets."}


async def test_a_tool_call_holding_a_lone_surrogate_is_recorded_and_stored(env, store, settings):
    # the model's arguments write half a UTF-16 pair, which no text holds: the call is refused
    # as invalid arguments, and the case is recorded, written and stored like any other
    from tests.fakes import call

    cs = cases("no-glowforge")
    model = ScriptedModel(call("search_catalog", query="glowforge\ud800"),
                          say("We don't have a Glowforge."))
    records = await run(Prepared(env, store, settings), cs, [Version("current", model)],
                        plan(cs))
    record = records["current"]
    [result] = record.cases
    [tool_call] = result.attempts[0].transcript.tool_calls
    assert result.status == "PASS" and tool_call.outcome == "invalid_arguments"
    assert tool_call.arguments == {"query": "glowforge"}
    assert (await store.load_run(record.run_id)).cases == record.cases


async def test_the_artifact_catches_up_before_a_run_lets_go_of_a_store_that_hangs(
        env, store, settings, tmp_path, monkeypatch):
    import asyncio

    from evals.record.artifact import read_run
    from evals.record.run import Models, RunSettings
    from evals.record.store import writer

    monkeypatch.setattr(writer, "FLUSH_TIMEOUT_S", 0.5)
    monkeypatch.setattr(writer, "WRITE_GATHER_S", 0.0)  # the first case alone in a batch
    hung = asyncio.Event()

    async def hangs(batch):  # the store takes the batch and never answers
        hung.set()
        await asyncio.sleep(3600)

    monkeypatch.setattr(store, "_write", hangs)
    cs = cases("no-glowforge,no-cnc-router")
    script = iter([say("We don't have a Glowforge."), say("We don't have a CNC router.")])

    class Second(ScriptedModel):  # the second case finishes once the first batch hangs
        async def complete(self, messages, tools=None, **kw):
            if self.requests:
                await hung.wait()
            return await super().complete(messages, tools, **kw)

    path = tmp_path / "run.json"
    records = await run_versions(Prepared(env, store, settings), cs,
                                 [Version("current", Second(*script))], plan(cs),
                                 settings=RunSettings(concurrency=1), models=Models(),
                                 vision=None, judge=None, artifact=path)
    assert sorted(c.id for c in read_run(path).cases) == ["no-cnc-router", "no-glowforge"]
    assert [c.status for c in records["current"].cases] == ["PASS", "PASS"]
    assert store.before_write is None


async def test_while_the_store_is_down_each_case_goes_into_the_artifact_at_once(
        env, store, settings, tmp_path, monkeypatch, capsys):
    import asyncio

    import psycopg

    from evals.record.artifact import read_run
    from evals.record.run import Models, RunSettings
    from evals.record.store import writer

    monkeypatch.setattr(writer, "FLUSH_TIMEOUT_S", 0.5)
    monkeypatch.setattr(writer, "WRITE_GATHER_S", 0.0)
    monkeypatch.setattr(writer, "RETRY_FIRST_S", 60.0)  # no second try (nor hook) in this run
    down = asyncio.Event()

    async def refuses(batch):
        down.set()
        raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(store, "_write", refuses)
    path = tmp_path / "run.json"
    seen = []

    class Noting(ScriptedModel):  # notes the file at each call after the store went down
        async def complete(self, messages, tools=None, **kw):
            if self.requests:
                await down.wait()
                seen.append(sorted(c.id for c in read_run(path).cases))
            return await super().complete(messages, tools, **kw)

    cs = cases("no-glowforge,no-cnc-router,no-vinyl-cutter")
    await run_versions(Prepared(env, store, settings), cs,
                       [Version("current", Noting(say("We don't have that."), repeat=True))],
                       plan(cs), settings=RunSettings(concurrency=1), models=Models(),
                       vision=None, judge=None, artifact=path)
    # the first case went in before the store's first try; the second at once, the store down
    assert seen == [["no-glowforge"], ["no-cnc-router", "no-glowforge"]]
    assert "failed (OperationalError: connection refused)" in capsys.readouterr().err
