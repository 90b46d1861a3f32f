"""The call cache end to end: a second run with nothing changed makes no model call and gives
the same statuses, says what it replayed; a comparison replays both sides it already has; the
gate says how many samples were replayed; `cache stats` and `cache clear`."""

import json
import re

import pytest

from app.db import scratch_database
from evals.cli import main
from tests.evals.cli.helpers import ANSWER, SELECTION
from tests.evals.helpers import cli_environment
from tests.evals.record.helpers import unfinished_copy
from tests.fake_openai import completion, fake_openai_server


@pytest.fixture
async def served(server_conninfo, store_template, tmp_path, monkeypatch):
    """The CLI with the cache on (EVAL_CACHE=reuse), against a fake model over HTTP: yields
    the run store's database and the requests the model received."""
    async with scratch_database(server_conninfo, prefix="test_cache",
                                template=store_template) as info:
        with fake_openai_server(lambda body: (200, completion(ANSWER["text"]))) as (base, got):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path), "EVAL_CACHE": "reuse"}):
                yield info, got


@pytest.fixture
def received(served):
    return served[1]


def statuses(path):
    return {c["id"]: c["status"] for c in json.loads(path.read_text())["cases"]}


def test_a_run_with_nothing_changed_replays_every_call(received, tmp_path, capsys):
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    made, first = len(received), statuses(artifact)
    first_run = json.loads(artifact.read_text())["run_id"]
    assert made == 2 and "replayed" not in capsys.readouterr().out
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    assert len(received) == made  # no call made
    assert statuses(artifact) == first  # a cache never changes a verdict
    out = capsys.readouterr().out
    assert f"2 of 2 model calls replayed (run {first_run})" in out
    assert (f"this change touches 0 of 2 items; 2 untouched, which can replay from the call cache"
            f" (2 calls of run {first_run} kept)") in out.splitlines()
    record = json.loads(artifact.read_text())
    assert record["settings"]["cache"] == "reuse"
    assert all(c["attempts"][0]["calls"]["replayed_from"] == [first_run]
               for c in record["cases"])

    # The baseline now replayed every call: they are kept under the run that made them.
    second_run = record["run_id"]
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0
    assert (f"this change touches 0 of 2 items; 2 untouched, which can replay from the call cache"
            f" (2 calls of run {second_run} kept)") in capsys.readouterr().out.splitlines()

    assert main(["run", *SELECTION, "--cache", "refresh", "--artifact", str(artifact)]) == 0
    assert len(received) == made * 2  # every call made again
    assert ("this change touches 0 of 2 items; 2 untouched (the call cache is refresh: every"
            " item calls the model)") in capsys.readouterr().out.splitlines()
    assert main(["run", *SELECTION, "--cache", "off", "--artifact", str(artifact)]) == 0
    assert len(received) == made * 3

    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "2 entries" in out and "openai/fake-chat" in out and "0 of a checksum-pinned" in out
    assert main(["cache", "clear", "--model", "nobody"]) == 0
    assert "removed 0 entries of nobody" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 2 entries from the call cache" in capsys.readouterr().out
    assert main(["cache", "stats"]) == 0
    assert "the call cache is empty" in capsys.readouterr().out


def test_a_comparison_replays_the_baseline_it_has_already_run(received, capsys, tmp_path):
    assert main(["run", *SELECTION, "--artifact", str(tmp_path / "a.json")]) == 0
    run_id = json.loads((tmp_path / "a.json").read_text())["run_id"]
    assert main(["point", "save", "base", "--from-run", run_id]) == 0
    before = len(received)
    assert main(["compare", "base"]) == 0
    assert len(received) == before  # both sides asked what the point's run asked
    out = capsys.readouterr().out
    assert "2 unchanged" in out

    assert main(["gate", *SELECTION, "--artifact", str(tmp_path / "g.json")]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    # The gate finds point base and runs both versions twice. Repetition 1 replays; repetition
    # 2 is a sample of its own, asked by both versions at once and made once: whichever asks
    # second replays it, so today's side replays 2 to 4 of its 4 samples.
    assert len(received) == before + 2
    replayed = re.fullmatch(r"GATE PASS \((\d) of 4 samples replayed from the call cache\)",
                            last)
    assert replayed and 2 <= int(replayed[1]) <= 4


def test_a_comparison_after_a_staff_only_change_calls_the_model_for_staff_items_only(
        served, capsys, tmp_path, monkeypatch):
    import asyncio

    from evals.record.store import RunStore
    from tests.evals.cli.test_impact import change_fragment

    info, received = served
    staff = ["--cases", "no-glowforge,typed-yes-is-not-confirm"]  # anonymous; staff
    assert main(["run", *staff, "--artifact", str(tmp_path / "a.json")]) == 0
    run_id = json.loads((tmp_path / "a.json").read_text())["run_id"]
    assert main(["point", "save", "base", "--from-run", run_id]) == 0
    before = len(received)
    change_fragment(monkeypatch, "maintenance", "Staff: be brief.")  # staff see it, no one else
    capsys.readouterr()
    assert main(["compare", "base"]) == 0
    out = capsys.readouterr().out
    # Only the staff item of today's side asks the model: its system prompt changed.
    [asked] = received[before:]
    assert "Staff: be brief." in asked["messages"][0]["content"]
    assert asked["messages"][-1]["content"] == "Yes, do it."

    async def calls(label):
        run = re.search(label + r" \(.*?run (\w+)\)", out)
        assert run, out
        async with RunStore.open(info) as store:
            record = await store.load_run(run[1])
        return {c.id: (sum(a.calls.made for a in c.attempts),
                       sum(a.calls.replayed for a in c.attempts)) for c in record.cases}

    # The point's agent asks what the point's run asked: every call replayed.
    assert asyncio.run(calls("point base")) == {"no-glowforge": (0, 1),
                                                "typed-yes-is-not-confirm": (0, 1)}
    assert asyncio.run(calls("today")) == {"no-glowforge": (0, 1),
                                           "typed-yes-is-not-confirm": (1, 0)}


def test_cache_commands_reject_what_they_do_not_know(received, capsys):
    assert main(["cache"]) == 2
    assert "the following arguments are required: cache_command" in capsys.readouterr().err
    assert main(["run", *SELECTION, "--cache", "sometimes"]) == 2
    assert "invalid choice: 'sometimes'" in capsys.readouterr().err


def test_off_touches_no_cache_table_and_a_failing_one_fails_no_run(served, tmp_path, capsys):
    import psycopg

    info, received = served
    artifact = ["--artifact", str(tmp_path / "a.json")]
    assert main(["run", *SELECTION, *artifact]) == 0
    with psycopg.connect(info, autocommit=True) as conn:
        conn.execute("ALTER TABLE eval_call_cache RENAME TO elsewhere")
    capsys.readouterr()
    assert main(["run", *SELECTION, "--cache", "off", *artifact]) == 0
    captured = capsys.readouterr()
    assert "call cache:" not in captured.err and "the call cache is off" in captured.out
    made = len(received)
    assert main(["run", *SELECTION, *artifact]) == 0  # reuse, on a cache that fails
    assert len(received) == made + 2
    assert capsys.readouterr().err.count("warning: call cache: a lookup failed") == 1


def test_a_resumed_run_keeps_its_cache_policy_and_its_advisory_judge(served, tmp_path):
    from evals.api.rerun import judge_of as _judge_of
    from evals.record.run import RunRecord, RunSettings

    info, received = served
    artifact = tmp_path / "run.json"
    assert main(["run", *SELECTION, "--artifact", str(artifact)]) == 0  # both calls cached
    assert main(["run", *SELECTION, "--cache", "off", "--artifact", str(artifact)]) == 0
    run_id = unfinished_copy(info, json.loads(artifact.read_text())["run_id"],
                             lambda c: c.id != "no-cnc-router", pid=999999999)
    made = len(received)
    assert main(["resume", run_id, "--artifact", str(artifact)]) == 0
    assert len(received) == made + 1  # off, as it began: the cached reply is not used
    assert json.loads(artifact.read_text())["settings"]["cache"] == "off"

    advisory = RunRecord(settings=RunSettings(advisory_judge=True))
    assert _judge_of(advisory).advisory and not _judge_of(RunRecord()).advisory
    assert _judge_of(RunRecord(), advisory=True).advisory  # run --failed --advisory-judge
