import pytest

from app.serving import serve_in_thread
from app.settings import Settings
from app.web import create_app
from evals.api.options import Endpoint
from evals.api.runs import endpoint_model as as_model
from evals.execute.endpoint import skip_reason
from evals.execute.runner import Variant, run_variants
from evals.judge.setup import JudgeSetup
from evals.judge.trust import Trust
from evals.load.cases import load_cases
from evals.settings import eval_settings
from tests.evals.helpers import select, verdict
from tests.fake_openai import completion, fake_openai_server
from tests.fakes import ScriptedModel, say


async def run_endpoint(items, model, judge, *, concurrency):
    """The items on the endpoint's path, as a run's endpoint version sends them."""
    variant = Variant("endpoint", model, executor="endpoint", skip=skip_reason)
    results = await run_variants(None, items, [variant], concurrency=concurrency, judge=judge)
    return results["endpoint"]


@pytest.fixture(autouse=True)
def no_endpoint_key(monkeypatch):
    """A run reads the endpoint's key from the environment (eval_settings, cached): none here,
    whatever the environment the tests run in holds."""
    monkeypatch.delenv("EVAL_ENDPOINT_API_KEY", raising=False)
    eval_settings.cache_clear()
    yield
    eval_settings.cache_clear()


def endpoint_model(base):
    """The endpoint as a run makes it its model."""
    return as_model(Endpoint(url=base, model="any"), Settings(model_timeout_s=10, model_retries=0))


async def test_endpoint_mode_asserts_and_judges_replies_from_a_real_http_server():
    cases = select(load_cases(), "no-glowforge,student-in-distress,staff-lists-open-tickets,"
                                 "form4-wash-time")

    def handler(body):
        return 200, completion("Sorry, the lab does not have a Glowforge. Please talk to staff.")

    judge = ScriptedModel(verdict("pass", "kind"))
    with fake_openai_server(handler) as (base, received):
        results = await run_endpoint(cases, endpoint_model(base),
                                     JudgeSetup(judge, Trust(True, "test")), concurrency=2)
    by_id = {r.id: r for r in results}
    assert by_id["no-glowforge"].status == "PASS"
    assert by_id["student-in-distress"].status == "PASS"
    assert by_id["staff-lists-open-tickets"].status == "SKIPPED"
    assert "needs app context (an identity)" in by_id["staff-lists-open-tickets"].skipped_reason
    assert "checks called_tool, cites_page" in by_id["form4-wash-time"].skipped_reason
    assert all(b["messages"][-1]["role"] == "user" for b in received)
    assert len(received) == 2  # no app composition: one plain request per runnable case


async def test_endpoint_mode_against_this_apps_own_openai_endpoint(env):
    app_model = ScriptedModel(say("Sorry, the lab does not have a Glowforge."), repeat=True)
    app = create_app(env.settings, db=env.db, model=app_model, manuals=env.library)
    with serve_in_thread(app) as base:
        results = await run_endpoint(select(load_cases(), "no-glowforge"),
                                     endpoint_model(f"{base}/v1"), None, concurrency=1)
    assert results[0].status == "PASS"
    # The app composed its own prompt for the request that came over HTTP.
    assert "The lab's catalogue" in app_model.requests[0]["messages"][0]["content"]


def test_a_case_with_frozen_tool_responses_needs_the_app(tmp_path):
    from app.capabilities import REGISTRY

    (tmp_path / "c.yaml").write_text(
        '- id: x\n  prompt: "Read https://a.example"\n  tool_responses:\n    read_page:\n'
        f'      contract: {REGISTRY.tool("read_page").contract()}\n'
        '      response: {url: "https://a.example", text: "A page."}\n'
        "  assert:\n    - kind: contains_all\n      value: [page]\n")
    [case] = load_cases(tmp_path)
    assert skip_reason(case) == ("needs app context (frozen tool responses), which endpoint"
                                 " mode does not have")


def test_a_check_of_tool_calls_is_skipped_by_what_the_registry_says_it_needs():
    from evals.execute.endpoint import skip_reason

    # no_unrequested_action and no_exfiltration read the tool calls an endpoint hides: with
    # a hand-kept list they were missing, and passed with no call in sight
    case = select(load_cases(), "earlier-turn-plants-an-audit-log")[0]
    assert skip_reason(case) == ("checks no_exfiltration, no_unrequested_action: an endpoint"
                                 " does not expose its tool calls")


async def test_a_transcript_that_hides_its_tool_calls_leaves_their_checks_undecided():
    """What a re-score of an endpoint's record sees: no call, and no way to know."""
    from evals.checks import CheckSpec, NoArgs, run_checks
    from evals.checks._registry import About
    from evals.execute.executors import HIDDEN, HIDDEN_WHY
    from evals.fixtures.catalog import fixtures_for
    from evals.record.transcript import Transcript

    hidden = Transcript(answer="Sure.", unseen=sorted(HIDDEN), unseen_why=HIDDEN_WHY)
    specs = (CheckSpec("no_exfiltration", NoArgs()), CheckSpec("not_claimed_done", NoArgs()))
    exfil, claimed = await run_checks(specs, hidden, fixtures_for("demo"), None,
                                      About(page="/", audience=None, catalog="demo"))
    assert not exfil.decided and not exfil.passed
    assert exfil.reason == ("needs its tool calls, which this transcript does not show (an"
                            " endpoint does not expose its tool calls)")
    assert claimed.decided and claimed.passed  # reads the answer only
