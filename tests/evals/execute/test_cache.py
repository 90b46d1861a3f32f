"""The model-call cache on the run path: a call is made once and replayed after, its transcript
re-checked; what changes what the model is asked misses; what does not is free; the cache
failing or cleared never fails a run."""

import asyncio
import json
import textwrap

import pytest

from app.chat.models import LiteLLMModel
from app.chat.openai_wire import OpenAICompatModel
from app.chat.reply import ModelReply, Usage
from app.embed import HashEmbedder
from app.settings import Settings
from evals.execute.cache import Cached, CacheUse, sample
from evals.execute.conversation import STOP
from evals.execute.env import eval_env
from evals.execute.runner import Variant, run_suite, run_variants
from evals.load.cases import load_cases
from evals.record import call_cache
from evals.record.call_cache import CallCache
from evals.settings import PHOTOS_DIR
from tests.evals.execute.test_responses import FROZEN
from tests.evals.load.helpers import item_of
from tests.evals.record.helpers import as_owner
from tests.fakes import ScriptedModel, call, say

CASES = """
- id: wants-trotec
  prompt: "What cuts acrylic?"
  assert:
    - kind: mentions_tool
      value: "{value}"
- id: wants-resin
  prompt: "What prints in resin?"
  assert:
    - kind: mentions_tool
      value: "Form 4"
"""
GOOD, BAD = say("Use the Trotec Speedy 400.", (30, 7)), say("Use the Form 4.")
WEEK_S = 7 * 86400.0


def cases(tmp_path, value="Trotec Speedy 400"):
    (tmp_path / "c.yaml").write_text(textwrap.dedent(CASES.format(value=value)))
    return load_cases(tmp_path, PHOTOS_DIR)


def use(store, policy="reuse", ttl_s=WEEK_S):
    return CacheUse(CallCache(store.db, ttl_s=ttl_s, refresh=policy == "refresh"), policy)


async def run(env, store, items, model, run_id, policy="reuse", **kw):
    cache = use(store, policy)
    out = await run_variants(env, items, [Variant("run", model, run_id=run_id)],
                             cache=cache, **kw)
    assert cache.cache is not None
    await cache.cache.close()
    return out["run"]


async def test_a_second_run_replays_every_call_and_checks_the_replayed_answer(
        env, store, tmp_path):
    items = cases(tmp_path)[:1]
    [first] = await run(env, store, items, ScriptedModel(GOOD), "run-one")
    assert first.status == "PASS"
    assert first.attempts[0].calls.made == 1 and first.attempts[0].calls.replayed == 0
    silent = ScriptedModel()  # would fail if it were called
    [again] = await run(env, store, items, silent, "run-two")
    assert silent.requests == [] and again.status == "PASS"
    a = again.attempts[0]
    assert (a.calls.made, a.calls.replayed, a.calls.replayed_from) == (0, 1, ["run-one"])
    assert (a.calls.replayed_prompt_tokens, a.calls.replayed_completion_tokens) == (30, 7)
    assert (a.usage.prompt_tokens, a.usage.completion_tokens) == (0, 0)  # none spent
    assert a.answer == "Use the Trotec Speedy 400."
    # A changed assertion judges the same replayed answer anew; the retry is a new sample.
    changed = cases(tmp_path, value="Form 4")[:1]
    retry = ScriptedModel(say("Still the Trotec Speedy 400."))
    [third] = await run(env, store, changed, retry, "run-three")
    assert third.status == "FAIL" and len(retry.requests) == 1
    assert third.attempts[0].calls.replayed == 1 and third.attempts[1].calls.made == 1
    assert "does not name Form 4" in third.attempts[0].checks[0].reason


async def test_repetitions_and_retries_are_samples_of_their_own(env, store, tmp_path):
    items = cases(tmp_path)[:1]
    # The two repetitions run at once: whichever asks first is answered BAD, then retried.
    first = await run(env, store, items, ScriptedModel(BAD, GOOD, GOOD), "one", repeat=2)
    assert sorted(r.status for r in first) == ["FLAKY", "PASS"]
    # Two attempts of one repetition, one of the other: three entries.
    assert (await call_cache.stats(store.db, WEEK_S)).entries == 3
    silent = ScriptedModel()
    again = await run(env, store, items, silent, "two", repeat=2)
    assert silent.requests == []
    # Each repetition replays its own samples: the one that was retried is again.
    assert {r.repetition: r.status for r in again} == {r.repetition: r.status for r in first}
    assert [r.attempts[-1].answer for r in again] == [GOOD.content, GOOD.content]


async def test_a_changed_tool_result_misses_only_the_calls_that_see_it(env, store, tmp_path):
    def scenario(text):
        return item_of(tmp_path, FROZEN.replace("Build volume 200 mm", text))

    await run(env, store, [scenario("Build volume 200 mm")],
              ScriptedModel(call("read_page", url="https://x.example"), say("200 mm.")), "one",
              visitor=ScriptedModel(say(STOP)))
    model = ScriptedModel(say("200 mm, revised."))
    [result] = await run(env, store, [scenario("Build volume 200 mm, revised")], model, "two",
                         visitor=ScriptedModel(say(STOP)))
    # The first call (before the page is read) replays; the one that sees the page is made.
    assert result.status == "PASS"
    assert len(model.requests) == 1 and "revised" in str(model.requests[0]["messages"])
    assert result.attempts[0].calls.replayed == 1 and result.attempts[0].calls.made == 1
    assert [c.result_map.get("text") for c in result.attempts[0].tool_calls] == [
        "Build volume 200 mm, revised"]


async def test_refresh_makes_every_call_and_keeps_it_over_the_old_one(env, store, tmp_path):
    items = cases(tmp_path)[:1]
    await run(env, store, items, ScriptedModel(say("The Trotec Speedy 400, I think.")), "one")
    fresh = ScriptedModel(GOOD)
    [result] = await run(env, store, items, fresh, "two", policy="refresh")
    assert len(fresh.requests) == 1 and result.attempts[0].calls.made == 1
    [again] = await run(env, store, items, ScriptedModel(), "three")
    assert again.attempts[0].answer == GOOD.content
    assert again.attempts[0].calls.replayed_from == ["two"]


async def test_off_touches_no_cache_table(env, store, tmp_path, capsys):
    await as_owner(store, "ALTER TABLE eval_call_cache RENAME TO gone")
    model = ScriptedModel(GOOD)
    [result] = await run_suite(env, cases(tmp_path)[:1], model, cache=CacheUse(None, "off"))
    assert result.status == "PASS" and result.attempts[0].calls.made == 0  # nothing tallied
    assert "call cache" not in capsys.readouterr().err


def by_prompt(replies):
    """A step that answers each case by its prompt: the cases run at once, in no set order."""
    def reply(messages, tools):
        asked = str(messages[-1]["content"])
        return next(r for prompt, r in replies.items() if prompt in asked)
    return reply


async def test_a_cache_that_fails_makes_misses_said_once_and_the_run_goes_on(
        env, store, tmp_path, capsys):
    await as_owner(store, "ALTER TABLE eval_call_cache RENAME TO gone")
    model = ScriptedModel(by_prompt({"What cuts acrylic?": GOOD, "What prints in resin?": BAD}),
                          repeat=True)
    results = await run(env, store, cases(tmp_path), model, "one")
    assert [r.status for r in results] == ["PASS", "PASS"]
    assert len(model.requests) == 2  # one call a case: each is made, neither replayed nor retried
    err = capsys.readouterr().err
    assert err.count("call cache: a lookup failed (UndefinedTable") == 1
    assert err.count("call cache: writing") == 1 and "they are not kept" in err


async def test_clearing_the_cache_while_a_run_goes_on_never_fails_it(env, store, tmp_path):
    items = cases(tmp_path)
    await run(env, store, items[:1], ScriptedModel(GOOD), "one")

    class ClearsFirst(ScriptedModel):
        async def complete(self, messages, tools=None, **kw):
            assert await call_cache.clear(store.db) >= 0
            return await super().complete(messages, tools, **kw)

    results = await run(env, store, items, ClearsFirst(BAD), "two", concurrency=1)
    assert [r.status for r in results] == ["PASS", "PASS"]
    assert results[0].attempts[0].calls.replayed == 1  # looked up before the clear
    assert (await call_cache.stats(store.db, WEEK_S)).entries == 1  # written after it


async def test_an_entry_of_another_shape_is_a_miss_and_written_over(env, store, tmp_path,
                                                                   capsys):
    items = cases(tmp_path)[:1]
    await run(env, store, items, ScriptedModel(GOOD), "one")
    text = '{"content": 5}'  # whole (its checksum matches), but not a reply
    await store.db.execute("UPDATE eval_call_cache SET reply = %s,"
                           " digest = encode(sha256(convert_to(%s, 'UTF8')), 'hex')",
                           (text, text))
    model = ScriptedModel(GOOD)
    [result] = await run(env, store, items, model, "two")
    assert len(model.requests) == 1 and result.status == "PASS"
    assert "is not a reply of the shape kept now" in capsys.readouterr().err
    [again] = await run(env, store, items, ScriptedModel(), "three")
    assert again.attempts[0].calls.replayed_from == ["two"]


async def test_a_run_whose_blob_server_has_another_port_replays_after_a_manual_search(
        env, store, server_conninfo, tmp_path):
    # The second run's environment starts while the first's holds its port: another port.
    # The answer cites the page it was given, by its address on the run's blob server: a
    # replay in the second run must cite that run's address, or `cites_page` finds no page.
    (tmp_path / "c.yaml").write_text(textwrap.dedent("""
        - id: wash-time
          prompt: "How long do I wash Form 4 prints?"
          assert:
            - kind: called_tool
              value: search_manual
            - kind: cites_page
        """))
    items = load_cases(tmp_path, PHOTOS_DIR)

    def cite(messages, tools):
        found = json.loads(messages[-1]["content"])
        passage = next(p for p in found["passages"] if p.get("url"))
        return say(f"Wash them ten minutes [{passage['title']}, p. {passage['page']}]"
                   f"({passage['url']}).")

    model = ScriptedModel(call("search_manual", question="Form 4 wash"), cite)
    [first] = await run(env, store, items, model, "one")
    assert first.status == "PASS", [c.reason for c in first.attempts[0].checks]
    assert env.library.store.base_url in str(model.requests[1]["messages"])  # it is asked
    assert env.library.store.base_url in first.attempts[0].answer
    kept = await store.db.fetch("SELECT reply FROM eval_call_cache")
    assert all(env.library.store.base_url not in r["reply"] for r in kept)  # kept port-free
    settings = Settings(data_dir=tmp_path / "two", model_chat="scripted/fake")
    async with eval_env(server_conninfo, settings, HashEmbedder()) as other:
        assert other.library.store.base_url != env.library.store.base_url
        silent = ScriptedModel()
        [again] = await run(other, store, items, silent, "two")
    assert silent.requests == [] and again.status == "PASS", \
        [c.reason for a in again.attempts for c in a.checks]
    assert (again.attempts[0].calls.made, again.attempts[0].calls.replayed) == (0, 2)
    assert other.library.store.base_url in str(again.attempts[0].tool_calls[0].result)
    # the replayed answer cites the page at this run's address
    assert again.attempts[0].answer == first.attempts[0].answer.replace(
        env.library.store.base_url, other.library.store.base_url)


@pytest.mark.parametrize("finish", ["length", "content_filter"])
async def test_a_replay_gives_the_provider_s_finish_reason_as_it_gave_it(store, finish):
    # Neither derived from the reply: a cut reply with no "length", a filtered one.
    received = ModelReply(content="Use the Tro", usage=Usage(9, 4, int(finish == "length")),
                          finish_reason=finish)
    messages = [{"role": "user", "content": "What cuts acrylic?"}]
    cache = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1):
        made = await Cached(ScriptedModel(received), cache, job="chat", run_id="one"
                            ).complete(messages)
    await cache.close()
    again = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1) as tally:
        replayed = await Cached(ScriptedModel(), again, job="chat", run_id="two"
                                ).complete(messages)
    await again.close()
    assert tally.replayed == 1 and made == received
    assert replayed == received and replayed.finish_reason == finish


def test_a_local_model_is_known_by_its_file_not_its_port():
    def local(port, sha="a" * 64):
        return OpenAICompatModel("openai/qwen", api_base=f"http://127.0.0.1:{port}/v1",
                                 api_key="local-no-key", timeout_s=5, retries=0,
                                 tool_calls_in_content=True, max_tokens=768, file_sha256=sha)

    assert local(5001).identity() == local(6002).identity()
    assert local(5001).identity() != local(5001, "b" * 64).identity()
    assert local(5001).identity()["file_sha256"] == "a" * 64
    assert "local-no-key" not in str(local(5001).identity())
    hosted = OpenAICompatModel("openai/gpt-4o", api_base="https://api.example/v1",
                               api_key="sk-secret", timeout_s=5, retries=0)
    assert hosted.identity()["api_base"] == "https://api.example/v1"
    assert "sk-secret" not in str(hosted.identity())
    assert ScriptedModel(model_id="scripted/x").identity() == {"model": "scripted/x"}
    routed = LiteLLMModel("anthropic/claude-x", api_key="sk-ant-secret", timeout_s=5, retries=0)
    assert routed.identity()["model"] == "anthropic/claude-x"
    assert "sk-ant-secret" not in str(routed.identity())


@pytest.mark.parametrize("policy", ["reuse", "refresh"])
async def test_the_visitor_goes_through_the_cache_too(env, store, tmp_path, policy):
    scenario = item_of(tmp_path, FROZEN.replace("max_turns: 1", "max_turns: 2"))

    def chat():
        return ScriptedModel(call("read_page", url="https://x.example"), say("200 mm."))

    first = ScriptedModel(say(STOP))
    await run(env, store, [scenario], chat(), "one", visitor=first)
    assert len(first.requests) == 1
    kept = await store.db.fetch("SELECT DISTINCT run_id FROM eval_call_cache")
    assert [r["run_id"] for r in kept] == ["one"]  # the visitor's calls too: the sample's run
    again = ScriptedModel(say(STOP))
    [result] = await run(env, store, [scenario], chat(), "two", visitor=again, policy=policy)
    assert len(again.requests) == (0 if policy == "reuse" else 1)
    spent = result.attempts[0].usage
    assert (spent.visitor_tokens, spent.completion_tokens) == \
        ((0, 0) if policy == "reuse" else (15, 10))


async def test_the_judge_goes_through_the_cache_too(env, store):
    from evals.judge.setup import JudgeSetup
    from tests.evals.checks.test_judged import DISTRESS, KIND, TRUSTED
    from tests.evals.helpers import select, verdict

    items = select(load_cases(), DISTRESS)
    judge = ScriptedModel(verdict("pass", "kind"))
    [first] = await run(env, store, items, ScriptedModel(KIND), "one",
                        judge=JudgeSetup(judge, TRUSTED))
    silent = ScriptedModel()
    [again] = await run(env, store, items, ScriptedModel(), "two",
                        judge=JudgeSetup(silent, TRUSTED))
    assert first.status == again.status == "PASS" and silent.requests == []
    assert again.attempts[0].calls.replayed == 2  # the chat model's call and the judge's
    assert again.attempts[0].checks[-1].reason == "kind"


class Slow(ScriptedModel):
    """A scripted model whose every call takes `seconds`."""

    def __init__(self, *steps, seconds=0.3, **kw):
        super().__init__(*steps, **kw)
        self.seconds = seconds

    async def complete(self, messages, tools=None, **kw):
        await asyncio.sleep(self.seconds)
        return await super().complete(messages, tools, **kw)


ASKED = [{"role": "user", "content": "What cuts acrylic?"}]


async def test_an_entry_keeps_what_its_call_took_and_a_replay_tallies_it(store):
    cache = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1) as made:
        await Cached(Slow(GOOD), cache, job="chat", run_id="one").complete(ASKED)
    await cache.close()
    [row] = await store.db.fetch("SELECT reply FROM eval_call_cache")
    took = json.loads(row["reply"])["latency_ms"]
    assert took >= 300 and made.replayed_ms_by_job == {}
    again = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1) as tally:
        replayed = await Cached(ScriptedModel(), again, job="chat", run_id="two"
                                ).complete(ASKED)
    await again.close()
    assert replayed == GOOD and tally.replayed == 1
    assert tally.replayed_calls_by_job == {"chat": 1}
    assert tally.replayed_ms_by_job == {"chat": took}  # as recorded, to the millisecond


async def test_a_wait_for_the_same_call_in_flight_is_not_counted_twice(store):
    # Two versions asking the very same thing at once: one makes the call, the other waits for
    # it (its measured time holds the wait) and adds only what the call took beyond that.
    cache = CallCache(store.db, ttl_s=WEEK_S)

    async def ask(model):
        with sample(1, 1) as tally:
            await Cached(model, cache, job="chat", run_id="one").complete(ASKED)
        return tally

    maker, waiter = await asyncio.gather(ask(Slow(GOOD)), ask(Slow(GOOD)))
    await cache.close()
    if maker.replayed:
        maker, waiter = waiter, maker
    assert (maker.made, waiter.replayed) == (1, 1)
    took = cache.written[next(iter(cache.written))].reply["latency_ms"]
    assert took >= 300 and waiter.replayed_ms_by_job["chat"] < 150


def limited(tmp_path, limit_s):
    (tmp_path / "c.yaml").write_text(textwrap.dedent(f"""
        - id: wants-trotec
          prompt: "What cuts acrylic?"
          max_latency_s: {limit_s}
          assert:
            - kind: mentions_tool
              value: "Trotec Speedy 400"
        """))
    return load_cases(tmp_path, PHOTOS_DIR)


def latency_check(result):
    return next(c for c in result.attempts[0].checks if c.kind.startswith("max_latency"))


@pytest.mark.parametrize(("limit_s", "passed"), [(30, True), (0.2, False)])
async def test_a_replayed_attempt_s_latency_limit_decides_on_the_recorded_latency(
        env, store, tmp_path, limit_s, passed):
    items = limited(tmp_path, limit_s)
    [first] = await run(env, store, items, Slow(GOOD, GOOD), "one")
    assert latency_check(first).passed is passed and latency_check(first).decided
    silent = ScriptedModel()
    [again] = await run(env, store, items, silent, "two")
    assert silent.requests == []
    check = latency_check(again)
    assert check.decided and check.passed is passed, check.reason
    assert "(1 replayed call at its recorded 0.3" in check.reason
    a = again.attempts[0]
    assert (a.calls.made, a.calls.replayed, a.calls.replayed_timed) == (0, 1, 1)
    assert a.calls.replayed_latency_ms is not None and a.calls.replayed_latency_ms >= 300
    assert again.status == first.status == ("PASS" if passed else "FAIL")


async def test_a_replayed_entry_kept_without_a_latency_leaves_the_limit_undecided(
        env, store, tmp_path):
    items = limited(tmp_path, 30)
    await run(env, store, items, ScriptedModel(GOOD), "one")
    # An entry as the cache kept it before latencies were: the reply alone.
    [row] = await store.db.fetch("SELECT key, reply FROM eval_call_cache")
    kept = json.loads(row["reply"])
    assert kept.pop("latency_ms") >= 0
    text = json.dumps(kept, sort_keys=True)
    await store.db.execute("UPDATE eval_call_cache SET reply = %s,"
                           " digest = encode(sha256(convert_to(%s, 'UTF8')), 'hex')",
                           (text, text))
    [again] = await run(env, store, items, ScriptedModel(), "two")
    a = again.attempts[0]
    assert a.calls.replayed == 1 and a.calls.replayed_latency_ms is None
    assert a.answer == GOOD.content  # replayed all the same
    check = latency_check(again)
    assert not check.decided and again.status == "UNDECIDED"
    assert check.reason.startswith("latency unknown: 1 model call(s) replayed from the call"
                                   " cache, not all with the latency they took when made")


async def test_a_replay_is_counted_at_the_price_its_call_was_made_at(store, monkeypatch):
    import evals.execute.cache_entry as cache_module  # where a call is priced
    from app.chat.reply import ModelReply, Usage

    priced = ModelReply(content="Use the Trotec Speedy 400.", usage=Usage(1000, 100))
    monkeypatch.setattr(cache_module, "price_per_token", lambda model_id: (1e-6, 1e-5))
    cache = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1):
        await Cached(ScriptedModel(priced, model_id="openai/gpt-4o"), cache, job="chat",
                     run_id="one").complete(ASKED)
    await cache.close()
    [row] = await store.db.fetch("SELECT reply FROM eval_call_cache")
    assert json.loads(row["reply"])["cost_usd"] == pytest.approx(0.002)
    # the price has changed since: the replay still costs what the call cost then
    monkeypatch.setattr(cache_module, "price_per_token", lambda model_id: (1e-5, 1e-4))
    again = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1) as tally:
        await Cached(ScriptedModel(model_id="openai/gpt-4o"), again, job="chat",
                     run_id="two").complete(ASKED)
    await again.close()
    assert tally.replayed_cost_by_job == {"chat": pytest.approx(0.002)}
    # an entry kept with no price recorded (an unpriced model) is unknown, never 0
    assert cache_module.cost_of({"cost_usd": None}) is None
    assert cache_module.cost_of({}) is None and cache_module.cost_of({"cost_usd": True}) is None


async def test_a_reply_holding_the_old_placeholder_address_is_replayed_unchanged(
        env, store, tmp_path):
    # Text that a visitor or a case author controls can hold any address, the cache's own
    # placeholder of old included: a replay gives it back as the model gave it, so a citation
    # of no page the run served fails on the replay as it failed when it was made.
    (tmp_path / "c.yaml").write_text(textwrap.dedent("""
        - id: wash-time
          prompt: "How long do I wash Form 4 prints?"
          assert:
            - kind: cites_page
        """))
    items = load_cases(tmp_path, PHOTOS_DIR)
    placeholder = "http://eval-blob-server.invalid/blobs"

    def cite(messages, tools):
        found = json.loads(messages[-1]["content"])
        passage = next(p for p in found["passages"] if p.get("url"))
        url = passage["url"].replace(env.library.store.base_url, placeholder)
        return say(f"Wash them ten minutes [{passage['title']}, p. {passage['page']}]({url}).")

    step = [call("search_manual", question="Form 4 wash"), cite]
    [first] = await run(env, store, items, ScriptedModel(*step, *step), "one")
    assert first.status == "FAIL" and placeholder in first.attempts[0].answer
    silent = ScriptedModel()
    [again] = await run(env, store, items, silent, "two")
    assert silent.requests == [] and again.attempts[0].calls.replayed == 2
    assert again.status == "FAIL"
    assert [a.answer for a in again.attempts] == [a.answer for a in first.attempts]


async def test_a_reply_holding_a_secret_is_not_kept_in_the_cache(env, store, tmp_path,
                                                                 monkeypatch, capsys):
    # Kept, it would outlive the secret's variable: a later run that does not know it as a
    # secret would replay it into evidence that is never removed.
    key = "sk-proj-Xa9fB2kLmQ7rT4vWyZ3cD8eF"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    items = cases(tmp_path)
    leaky = say(f"Use the Trotec Speedy 400. My key is {key[8:]}, by the way.")
    model = ScriptedModel(by_prompt({"What cuts acrylic?": leaky, "What prints in resin?": BAD}),
                          repeat=True)
    first = await run(env, store, items, model, "one")
    assert [r.status for r in first] == ["PASS", "PASS"]
    rows = await store.db.fetch("SELECT reply FROM eval_call_cache")
    assert len(rows) == 1 and "Form 4" in rows[0]["reply"]  # the other reply is kept
    assert all(key[8:18].lower() not in r["reply"].lower() for r in rows)
    assert "call cache: a reply holding a secret (or a piece of one) is not kept" in \
        capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY")
    again_model = ScriptedModel(GOOD)
    again = await run(env, store, items[:1], again_model, "two")
    assert len(again_model.requests) == 1  # made again, never replayed
    assert again[0].attempts[0].answer == GOOD.content


async def test_a_request_or_a_reply_holding_a_nul_is_never_kept(store, capsys):
    # A NUL is the blob server's marker in what is kept: text holding one is made every time.
    cache = CallCache(store.db, ttl_s=WEEK_S)
    blobs = "http://127.0.0.1:8766/blobs"
    nul_asked = [{"role": "user", "content": "What cuts\x00acrylic?"}]
    with sample(1, 1) as tally:
        model = ScriptedModel(GOOD, GOOD, say("Trotec\x00Speedy"), say("Trotec\x00Speedy"))
        cached_model = Cached(model, cache, job="chat", run_id="one", blob_base=blobs)
        for _ in range(2):
            assert await cached_model.complete(nul_asked) == GOOD
        for _ in range(2):
            assert (await cached_model.complete(ASKED)).content == "Trotec\x00Speedy"
    await cache.close()
    assert len(model.requests) == 4 and (tally.made, tally.replayed) == (4, 0)
    assert (await call_cache.stats(store.db, WEEK_S)).entries == 0
    err = capsys.readouterr().err
    assert "a request holding a NUL character is neither looked up nor kept" in err
    assert "a reply holding a NUL character is not kept" in err


async def test_a_kept_blob_address_replayed_where_the_run_has_no_blob_server_is_a_miss(
        store, capsys):
    blobs = "http://127.0.0.1:8766/blobs"
    cited = say(f"See [the manual, p. 3]({blobs}/manuals/form-4.pdf#page=3).")
    cache = CallCache(store.db, ttl_s=WEEK_S)
    with sample(1, 1):
        await Cached(ScriptedModel(cited), cache, job="chat", run_id="one",
                     blob_base=blobs).complete(ASKED)
    await cache.close()
    [row] = await store.db.fetch("SELECT reply FROM eval_call_cache")
    assert blobs not in row["reply"] and "\\u0000blob-server\\u0000" in row["reply"]
    # The same key, asked by a model wrapped with no blob server: the address cannot be given.
    again = CallCache(store.db, ttl_s=WEEK_S)
    made = ScriptedModel(GOOD)
    with sample(1, 1) as tally:
        assert await Cached(made, again, job="chat", run_id="two").complete(ASKED) == GOOD
    await again.close()
    assert tally.made == 1 and tally.replayed == 0
    assert "is not a reply of the shape kept now" in capsys.readouterr().err
