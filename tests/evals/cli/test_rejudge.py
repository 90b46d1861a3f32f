"""`python -m evals rejudge RUN`: a stored run's replies judged again by another judge (a fake
OpenAI server plays both judges), stored as an assessment beside the run's verdicts, which
stay as they were; the same trust rule as a run; the call cache; and what it refuses."""

import asyncio
import json
import os

import pytest

from app.db import scratch_database
from evals.cli import main
from evals.record.assessment import assessments_of
from evals.record.store import RunStore
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server

CASES = "student-in-distress,off-topic-request"
# The run's judge passes the reply to the student in distress and fails the other; the other
# judge passes both.
SAYS = {"fake-judge": {"giving up": "pass", "French Revolution": "fail"},
        "other-judge": {"giving up": "pass", "French Revolution": "pass"}}


def answer(body):
    if body.get("response_format"):  # a judge
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        said = next(v for k, v in SAYS[body["model"]].items() if k in user)
        return 200, completion(json.dumps({"verdict": said,
                                           "reason": f"{body['model']} says {said}"}))
    return 200, completion("I'm sorry it feels like that. Please talk to lab staff or the"
                           " university's support services; I can help with the lab.")


@pytest.fixture
async def served(server_conninfo, store_template, tmp_path, monkeypatch):
    async with scratch_database(server_conninfo, prefix="test_rejudge",
                                template=store_template) as info:
        with fake_openai_server(answer) as (base, received):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_JUDGE": "openai/fake-judge", "MODEL_API_BASE": base,
                    "OPENAI_API_KEY": "sk-test", "DATA_DIR": str(tmp_path)}):
                yield received


def in_store(call):
    async def body():
        async with RunStore.open(os.environ["DATABASE_URL"]) as store:
            return await call(store)
    return asyncio.run(body())


def judged_run(tmp_path, capsys, *more):
    artifact = tmp_path / "run.json"
    main(["run", "--cases", CASES, "--advisory-judge", *more, "--artifact", str(artifact)])
    capsys.readouterr()
    return json.loads(artifact.read_text())["run_id"]


def asked(received, model):
    """The judge requests a model received, as (messages), in the order they came (a run's
    items are judged concurrently: the order is the scheduler's)."""
    return [b["messages"] for b in received if b.get("response_format") and
            b["model"] == model]


def as_a_set(requests):
    """Requests in an order of their own (their JSON), to compare what was asked regardless of
    the order it came in."""
    return sorted(json.dumps(messages, sort_keys=True) for messages in requests)


def test_a_run_is_judged_again_beside_its_own_verdicts(served, tmp_path, capsys):
    run_id = judged_run(tmp_path, capsys, "--repeat", "5")
    before = in_store(lambda store: store.load_run(run_id))
    assert main(["rejudge", run_id[:6], "--judge-model", "openai/other-judge",
                 "--trust-judge"]) == 0
    out = capsys.readouterr().out
    # the other judge read exactly what the run's judge read, verdict by verdict
    assert as_a_set(asked(served, "other-judge")) == as_a_set(asked(served, "fake-judge"))
    assert len(asked(served, "other-judge")) == 10
    assert f"rejudge of run {run_id}: 10 judged verdict(s) in 10 stored result(s) of 2" \
        " item(s)" in out
    assert "original judge: openai/fake-judge (prompt " in out
    assert "new judge: openai/other-judge (prompt " in out and \
        "its verdicts decide on --trust-judge only" in out
    rows = [line.split() for line in out.splitlines()
            if line.startswith(("student-in-distress ", "off-topic-request "))]
    assert ["student-in-distress", "1", "1", "1", "pass", "pass", "yes", "judge"] in rows
    assert ["off-topic-request", "5", "1", "1", "fail", "pass", "no", "judge"] in rows
    assert "  ≠ off-topic-request #1 a1 c1 (judge)" in out
    assert "      original fail: fake-judge says fail" in out
    assert "      new pass: other-judge says pass" in out
    assert "totals: 10 verdict(s) · original: 5 pass, 5 fail · new: 10 pass · both gave a" \
        " verdict on 10: 5 agree, 5 disagree" in out
    assert "agreement between the two judges: 50% on 10 verdict(s); Cohen's kappa 0.00" in out
    assert "statuses under the new verdicts: 10 changed (UNDECIDED → PASS: student-in-distress" \
        " #1 #2 #3 #4 #5, off-topic-request #1 #2 #3 #4 #5), 0 unchanged" in out
    assert "judge calls: 10 made, 0 replayed from the call cache" in out
    assert f"of run {run_id}, beside its original verdicts (unchanged)" in out
    # the run's own verdicts are as they were; the re-judging is stored beside them
    after = in_store(lambda store: store.load_run(run_id))
    assert after.model_dump() == before.model_dump()
    [stored] = in_store(lambda store: assessments_of(store, run_id))
    assert stored.kind == "rejudge" and stored.judge.model == "openai/other-judge"
    assert {c.status for c in stored.cases} == {"PASS"} and len(stored.cases) == 10
    assert all(c.checks[0].result.judge.verdict == "pass" for c in stored.cases)
    # the run's page shows it beside the run's own results
    page = tmp_path / "run.html"
    assert main(["report", run_id, "--html", str(page)]) == 0
    assert f"run {run_id}, 1 assessment(s) beside it)" in capsys.readouterr().out
    text = page.read_text()
    assert "Assessments beside this run (1)" in text and f'id="assessment-{stored.id}"' in text
    assert "10 stored result(s); 10 check(s) beside the run&#x27;s: 10 pass; 5 agree, 5 differ;" \
        " 10 status(es) changed" in text


def test_too_few_verdicts_give_no_kappa_and_the_cache_replays_a_judge_asked_before(
        served, tmp_path, capsys):
    run_id = judged_run(tmp_path, capsys)
    args = ["rejudge", run_id, "--judge-model", "openai/other-judge", "--advisory-judge",
            "--cache", "reuse"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "advisory (--advisory-judge)" in out
    assert "agreement between the two judges: not reported (2 rated case(s): below 10 the" \
        " estimate is too unsteady to report" in out
    assert "statuses under the new verdicts: 0 changed, 2 unchanged" in out  # advisory
    made = len(asked(served, "other-judge"))
    assert main(args) == 0  # asked again: the cache has both verdicts
    out = capsys.readouterr().out
    assert len(asked(served, "other-judge")) == made
    assert "judge calls: 0 made, 2 replayed from the call cache" in out
    assert len(in_store(lambda store: assessments_of(store, run_id))) == 2
    assert main(["runs"]) == 0
    assert "(2 assessment(s) beside it)" in capsys.readouterr().out


def test_an_untrusted_judge_is_not_called_unless_advisory(served, tmp_path, capsys):
    run_id = judged_run(tmp_path, capsys)
    assert main(["rejudge", run_id, "--judge-model", "openai/other-judge"]) == 2
    err = capsys.readouterr().err
    assert "openai/other-judge has not earned trust, so it is not called and would judge" \
        " nothing again; --advisory-judge asks it anyway" in err and "nothing was stored" in err
    assert asked(served, "other-judge") == []
    assert in_store(lambda store: assessments_of(store, run_id)) == []


def test_the_same_judge_is_said_to_replay_from_the_cache(served, tmp_path, capsys):
    run_id = judged_run(tmp_path, capsys)
    assert main(["rejudge", run_id, "--judge-model", "openai/fake-judge",
                 "--advisory-judge", "--cache", "reuse"]) == 0
    assert "is the run's own judge: verdicts it gave are replayed from the call cache" in \
        capsys.readouterr().out


def test_what_cannot_be_judged_again_is_refused_or_left_out(served, tmp_path, capsys,
                                                            monkeypatch):
    assert main(["rejudge", "nosuchrun", "--judge-model", "openai/other-judge"]) == 2
    assert "no stored run 'nosuchrun'" in capsys.readouterr().err
    main(["run", "--cases", "no-glowforge", "--artifact", str(tmp_path / "plain.json")])
    plain = json.loads((tmp_path / "plain.json").read_text())["run_id"]
    capsys.readouterr()
    assert main(["rejudge", plain, "--judge-model", "openai/other-judge"]) == 2
    assert f"run {plain} holds no judged verdict to judge again" in capsys.readouterr().err
    run_id = judged_run(tmp_path, capsys)
    # One judged case edited since the run, the other gone from the case files.
    from evals.load import cases as case_loader

    real = case_loader.load_cases

    def edited(*args, **kw):
        loaded = real(*args, **kw)
        return [c.model_copy(update={"rubric": "Another rubric."})
                if c.id == "student-in-distress" else c
                for c in loaded if c.id != "off-topic-request"]

    monkeypatch.setattr("evals.load.selection.load_cases", edited)
    assert main(["rejudge", run_id, "--judge-model", "openai/other-judge",
                 "--advisory-judge"]) == 2
    err = capsys.readouterr().err
    assert f"no verdict of run {run_id} can be judged again, so nothing was stored:" in err
    assert "  student-in-distress #1: edited since the run: its rubric or criteria may not be" \
        " what was judged" in err
    assert asked(served, "other-judge") == []
    assert in_store(lambda store: assessments_of(store, run_id)) == []
    monkeypatch.setattr("evals.load.selection.load_cases",
                        lambda *a, **kw: [c for c in real(*a, **kw)
                                          if c.id not in CASES.split(",")])
    assert main(["rejudge", run_id, "--judge-model", "openai/other-judge"]) == 2
    assert "none of the 2 judged item(s) of run" in capsys.readouterr().err


def test_a_pack_rates_the_replies_again_and_an_unknown_one_is_refused(served, tmp_path,
                                                                      capsys):
    from evals.judge import MAKERSPACE
    from evals.load.packs import load_pack_prompt

    run_id = judged_run(tmp_path, capsys)
    pack = load_pack_prompt("safety/puts-people-first")
    assert main(["rejudge", run_id, "--judge-model", "openai/other-judge", "--pack",
                 "safety/puts-people-first", "--advisory-judge"]) == 0
    out = capsys.readouterr().out
    assert f"(prompt {pack.hash(MAKERSPACE.hash())}, pack safety/puts-people-first)" in out
    sent = [m["content"] for messages in asked(served, "other-judge") for m in messages
            if m["role"] == "user"]
    assert len(sent) == 2 and all(pack.rubric in s for s in sent)
    [stored] = in_store(lambda store: assessments_of(store, run_id))
    assert stored.judge.pack == "safety/puts-people-first"
    assert main(["rejudge", run_id, "--judge-model", "openai/other-judge", "--pack",
                 "nope/x"]) == 2
    assert "cannot start: --judge 'nope/x'" in capsys.readouterr().err
