"""The version commands end to end (point, compare, gate): a real run store, a fake model
over HTTP."""

import asyncio
import json

import pytest

from app.db import scratch_database
from evals.cli import main
from tests.evals.cli.helpers import ANSWER, SELECTION, change_fragment
from tests.evals.helpers import cli_environment
from tests.fake_openai import completion, fake_openai_server

BRIEF = "Be brief."


def talk(body):
    """A judge that passes every criterion, a visitor who asks once and stops, and a chat
    model that says nothing once it is told to be brief (the `answered` check fails)."""
    if body.get("response_format"):
        return 200, completion(json.dumps({"verdict": "pass", "reason": "it is plain"}))
    if "visitor" in body["model"]:
        said = sum(m["role"] == "assistant" for m in body["messages"])
        return 200, completion("Can I mill an aluminium bracket on your CNC router?"
                               if not said else "STOP")
    told = body["messages"][0]["content"]
    return 200, completion("" if BRIEF in told else "We don't have a CNC router here.")


@pytest.fixture
async def talking(server_conninfo, store_template, tmp_path, monkeypatch):
    """The CLI on a scratch store, with a scripted chat model, visitor and judge (`talk`)."""
    async with scratch_database(server_conninfo, prefix="test_cli_talk",
                                template=store_template) as info:
        with fake_openai_server(talk) as (base, _):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_JUDGE": "openai/fake-judge", "MODEL_SIM_USER": "openai/fake-visitor",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path)}):
                yield


@pytest.mark.usefixtures("cli")
def test_point_compare_refuse_adopt_and_pair_runs(capsys, monkeypatch, tmp_path):
    assert main(["point", "save", "base", *SELECTION]) == 0
    assert "saved point base" in capsys.readouterr().out
    assert main(["point", "list"]) == 0
    assert "base" in capsys.readouterr().out
    assert main(["point", "show", "base"]) == 0
    shown = capsys.readouterr().out
    assert "anonymous / demo" in shown and "plan" in shown
    assert main(["point", "save", "base", *SELECTION]) == 2
    assert "exists already" in capsys.readouterr().err

    assert main(["compare", "base"]) == 0
    out = capsys.readouterr().out
    assert "unchanged  PASS      → PASS      no-glowforge" in out
    assert "0 improved · 0 regressed · 2 unchanged · 0 uncertain" in out
    assert "no discordant pairs" in out and "comparison" in out

    import evals.load.plan as plan_module
    monkeypatch.setattr(plan_module, "HARNESS_VERSION", "changed-for-the-test")
    assert main(["compare", "base"]) == 2
    err = capsys.readouterr().err
    assert "the plan changed since point base" in err and "harness changed" in err
    assert main(["compare", "base", "--adopt-plan"]) == 0
    assert "adopting the new plan (1 change(s)) as point base+" in capsys.readouterr().out

    assert main(["runs"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert len(ids) == 4  # two comparisons, two runs each; newest first
    assert main(["compare", "--runs", ids[0], ids[1]]) == 0  # the adopted comparison's runs
    out = capsys.readouterr().out
    assert "2 unchanged" in out
    cid = out.split("comparison ")[-1].split()[0]
    page = tmp_path / "comparison.html"
    assert main(["report", cid, "--html", str(page)]) == 0
    assert f"comparison {cid}, 2 cases paired" in capsys.readouterr().out
    html = page.read_text()
    assert 'class="unchanged" style="width:100.0%"' in html and "<script" not in html
    assert 'id="now-no-glowforge-r1"' in html and 'id="before-no-glowforge-r1"' in html
    assert main(["report", "zzz", "--html", str(page)]) == 2
    assert "no stored run or comparison 'zzz'" in capsys.readouterr().err
    assert page.read_text() == html  # a failed report leaves the page it would replace
    assert main(["compare", "--runs", ids[3], ids[0]]) == 2
    assert "ran different plans" in capsys.readouterr().err

    assert main(["compare", "nope"]) == 2
    assert "no comparison point 'nope'; points: base" in capsys.readouterr().err
    assert main(["compare", "--runs", "zzz", ids[0]]) == 2
    assert "no stored run 'zzz'" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_the_gate_against_a_point_saved_with_one_repetition(capsys, tmp_path):
    assert main(["point", "save", "one", *SELECTION]) == 0
    assert main(["gate", *SELECTION, "--against", "one",
                 "--artifact", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "against the comparison point:" in out and "no discordant pairs" in out
    assert out.splitlines()[-1] == "GATE PASS (call cache off)"


@pytest.mark.usefixtures("cli")
def test_the_gate_passes_and_fails(capsys, tmp_path):
    assert main(["gate", *SELECTION, "--artifact", str(tmp_path / "a.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "GATE PASS (call cache off)"
    ANSWER["text"] = "Use the Glowforge Pro and the Shapeoko."
    try:
        assert main(["gate", *SELECTION, "--artifact", str(tmp_path / "a.json")]) == 1
    finally:
        ANSWER["text"] = "We don't have a Glowforge or a CNC router here."
    out = capsys.readouterr().out
    assert "honest-absence         yes    2 miss       2 miss      FAIL" in out
    assert out.splitlines()[-1].startswith("GATE FAIL: honest-absence: 2 miss(es) in a run")


@pytest.mark.usefixtures("cli")
def test_a_gate_whose_store_is_down_at_the_end_says_so_and_fails(capsys, tmp_path,
                                                                  monkeypatch):
    from tests.evals.cli.helpers import store_down_at_the_end

    store_down_at_the_end(monkeypatch)
    artifact = tmp_path / "a.json"
    assert main(["gate", *SELECTION, "--artifact", str(artifact)]) == 1
    err = capsys.readouterr().err
    assert f"python -m evals runs --import {artifact} puts it there" in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("cli")
def test_scenarios_are_frozen_compared_and_a_changed_visitor_is_refused(capsys, monkeypatch):
    from app.settings import get_settings

    # The criteria's judge: not trusted, so never called; the visitor is scripted too.
    monkeypatch.setenv("MODEL_JUDGE", "openai/fake-judge")
    monkeypatch.setenv("MODEL_SIM_USER", "openai/fake-visitor")
    get_settings.cache_clear()
    assert main(["point", "save", "lack", "--cases", "machines-we-lack"]) == 0
    assert "(0 cases, 2 conversations)" in capsys.readouterr().out
    assert main(["point", "save", "x", "--cases", "machines-we-lack", "--cases-only"]) == 2
    assert "unknown 'machines-we-lack'" in capsys.readouterr().err
    assert main(["point", "save", "talk", "--cases", "cnc-router-for-aluminium"]) == 0
    assert "(0 cases, 1 conversations)" in capsys.readouterr().out
    assert main(["point", "show", "talk"]) == 0
    assert "visitor openai/fake-visitor (instructions " in capsys.readouterr().out

    assert main(["compare", "talk"]) == 0
    out = capsys.readouterr().out
    # Its criteria have no trusted judge: the pair is uncertain, never unchanged or moved.
    assert "uncertain  UNDECIDED → UNDECIDED cnc-router-for-aluminium@calm" in out
    assert "0 improved · 0 regressed · 0 unchanged · 1 uncertain" in out

    monkeypatch.setenv("MODEL_SIM_USER", "openai/other-visitor")
    get_settings.cache_clear()
    assert main(["compare", "talk"]) == 2
    err = capsys.readouterr().err
    assert "the plan changed since point talk" in err
    assert "simulated visitor's model changed: openai/fake-visitor -> openai/other-visitor" in err

    assert main(["runs"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert main(["run", "--cases", "cnc-router-for-aluminium"]) == 1  # undecided
    capsys.readouterr()
    assert main(["runs"]) == 0
    newest = capsys.readouterr().out.splitlines()[0].split()[0]
    assert main(["compare", "--runs", ids[0], newest]) == 2
    assert "simulated visitor's model changed" in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_compare_and_the_gate_say_what_each_side_took_and_limit_its_increase(
        capsys, monkeypatch, tmp_path):
    assert main(["point", "save", "spend", *SELECTION]) == 0
    assert main(["compare", "spend"]) == 0
    out = capsys.readouterr().out
    assert "latency per attempt: p50" in out and " · p95 " in out
    # The fake model has no price: its cost is unknown, and a cost limit cannot pass.
    assert "cost per item: unknown (2 attempt(s) without a price)" in out
    artifact = str(tmp_path / "a.json")
    assert main(["gate", *SELECTION, "--against", "spend", "--artifact", artifact,
                 "--max-cost-increase", "25%"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("GATE FAIL: cost per item cannot be checked against the limit"
                           " +25%: unknown (baseline 4 attempt(s) without a price; current 4")
    monkeypatch.setenv("EVAL_MAX_COST_INCREASE", "25")
    from evals.settings import eval_settings
    eval_settings.cache_clear()
    assert main(["gate", *SELECTION, "--against", "spend", "--artifact", artifact]) == 1
    assert "cost per item cannot be checked" in capsys.readouterr().out
    assert main(["gate", *SELECTION, "--max-p95-increase", "lots"]) == 2
    assert "--max-p95-increase: invalid percent value: 'lots'" in capsys.readouterr().err
    eval_settings.cache_clear()


@pytest.mark.usefixtures("talking")
def test_a_scenario_that_regresses_after_a_fragment_change_is_one_moved_unit(capsys,
                                                                              monkeypatch):
    trusted = ["--trust-judge"]  # the criteria decide, so the pairs can move
    assert main(["point", "save", "talk", "--cases", "cnc-router-for-aluminium",
                 "--repeat", "2", *trusted]) == 0
    capsys.readouterr()
    change_fragment(monkeypatch, text=BRIEF)
    assert main(["compare", "talk", *trusted]) == 0
    out = capsys.readouterr().out
    assert "  regressed  PASS PASS → FAIL FAIL cnc-router-for-aluminium@calm\n" in out
    # Two regressed repetitions of one scenario in one style are one discordant unit.
    assert "items (each once, over its 2 repetitions): 0 improved · 1 regressed · 0" in out
    assert "exact McNemar p = 1 on 1 discordant pairs" in out
    why = out.split("why they moved:")[1]
    assert "1 regressed (cnc-router-for-aluminium@calm)" in why
    assert "after the `lab_identity` fragment changed" in why and f"+{BRIEF}" in why


@pytest.mark.usefixtures("cli")
def test_a_hard_file_that_is_no_case_or_scenario_file_is_refused(capsys, monkeypatch, tmp_path):
    from evals.api.gating import hard_files
    from evals.settings import eval_settings

    assert hard_files(("machines-we-lack", "honest-absence")) == ("machines-we-lack",
                                                                  "honest-absence")
    artifact = tmp_path / "a.json"
    assert main(["gate", *SELECTION, "--hard", "honest-absense,machines-we-lack",
                 "--artifact", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert "--hard (EVAL_HARD_FILES): 'honest-absense' is no case or scenario file." in err
    assert "honest-absence" in err and "machines-we-lack" in err  # the files it could be
    monkeypatch.setenv("EVAL_HARD_FILES", "manual-grounding,honest-absence.yaml")
    eval_settings.cache_clear()
    try:
        assert main(["gate", *SELECTION, "--artifact", str(artifact)]) == 2
    finally:
        eval_settings.cache_clear()
    assert "'honest-absence.yaml' is no case or scenario file" in capsys.readouterr().err
    assert not artifact.exists()  # refused before anything ran
    assert main(["runs"]) == 0
    assert "no stored runs" in capsys.readouterr().out


def scenarios_today(monkeypatch, change):
    """Today's scenario files, as `change` leaves the shipped ones (a scenario deleted or
    moved since a point was saved)."""
    import evals.load.selection as selection

    real = selection.load_scenarios

    def load(*args, **kwargs):
        scenarios, shared = real(*args, **kwargs)
        return [c for s in scenarios if (c := change(s)) is not None], shared

    monkeypatch.setattr(selection, "load_scenarios", load)


def with_a_visitor(monkeypatch):
    from app.settings import get_settings

    monkeypatch.setenv("MODEL_JUDGE", "openai/fake-judge")
    monkeypatch.setenv("MODEL_SIM_USER", "openai/fake-visitor")
    get_settings.cache_clear()


def nothing_stored_but(points, capsys):
    assert main(["runs"]) == 0
    assert "no stored runs" in capsys.readouterr().out
    assert main(["point", "list"]) == 0
    assert sorted(line.split()[0] for line in capsys.readouterr().out.splitlines()) == points


@pytest.mark.usefixtures("cli")
def test_a_point_whose_scenario_was_deleted_names_it_and_says_what_to_do(capsys, monkeypatch):
    with_a_visitor(monkeypatch)
    assert main(["point", "save", "talk", "--cases", "cnc-router-for-aluminium,no-glowforge"]) \
        == 0
    assert main(["point", "save", "only", "--cases", "cnc-router-for-aluminium"]) == 0
    capsys.readouterr()
    scenarios_today(monkeypatch, lambda s: None if s.id == "cnc-router-for-aluminium" else s)

    assert main(["compare", "talk"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("point talk selects 'cnc-router-for-aluminium', no longer a"
                          " case or scenario file or id (deleted or renamed since the point"
                          " was saved). Rerun with --adopt-plan to leave")
    assert "python -m evals point save NAME --cases no-glowforge" in err
    assert "EVAL_CASES" not in err
    assert main(["compare", "only", "--adopt-plan"]) == 2
    assert "and nothing else: it cannot run again." in capsys.readouterr().err
    nothing_stored_but(["only", "talk"], capsys)

    assert main(["compare", "talk", "--adopt-plan"]) == 0
    out = capsys.readouterr().out
    assert "leaving out 'cnc-router-for-aluminium': no longer a case or scenario" in out
    # The item removed, and with it the plan's visitor and judge: no conversation is left.
    assert "adopting the new plan (3 change(s)) as point talk+" in out
    assert "unchanged  PASS      → PASS      no-glowforge" in out
    assert "cnc-router" not in out.split("adopting")[1]


@pytest.mark.usefixtures("cli")
def test_a_point_never_told_a_scenario_s_context_names_it_and_writes_nothing(capsys,
                                                                            monkeypatch):
    from evals.load.context import Context

    with_a_visitor(monkeypatch)
    assert main(["point", "save", "talk", "--cases", "cnc-router-for-aluminium"]) == 0
    capsys.readouterr()
    moved = Context.model_validate({"as": "staff"})
    scenarios_today(monkeypatch, lambda s: s.model_copy(update={"context": moved})
                    if s.id == "cnc-router-for-aluminium" else s)
    for adopt in ([], ["--adopt-plan"]):
        assert main(["compare", "talk", *adopt]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith(
            "point talk cannot run these items: its frozen agent was never told anything"
            " in their context: staff / demo (cnc-router-for-aluminium@calm).")
        assert "--adopt-plan keeps that agent, so it cannot help" in captured.err
        assert ("python -m evals point save NAME --cases cnc-router-for-aluminium; or put the"
                " items back in a context the point froze (anonymous / demo)") in captured.err
        assert "adopting" not in captured.out
    nothing_stored_but(["talk"], capsys)


@pytest.mark.usefixtures("cli")
def test_a_changed_visitor_is_adopted_as_a_plan_change_only_when_asked(capsys, monkeypatch):
    from app.settings import get_settings

    with_a_visitor(monkeypatch)
    assert main(["point", "save", "talk", "--cases", "cnc-router-for-aluminium"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MODEL_SIM_USER", "openai/other-visitor")
    get_settings.cache_clear()
    assert main(["compare", "talk"]) == 2
    assert "simulated visitor's model changed" in capsys.readouterr().err
    assert main(["compare", "talk", "--adopt-plan"]) == 0
    out = capsys.readouterr().out
    adopted = out.split("adopting the new plan (1 change(s)) as point ")[1].split()[0]
    assert adopted.startswith("talk+")
    assert "uncertain  UNDECIDED → UNDECIDED cnc-router-for-aluminium@calm" in out

    def shown(name):
        assert main(["point", "show", name]) == 0
        lines = capsys.readouterr().out.splitlines()
        return next(w for w in lines if w.startswith("agent ")), next(
            w for w in lines if w.startswith("plan "))

    (agent, plan), (old_agent, old_plan) = shown(adopted), shown("talk")
    assert agent == old_agent  # the point's agent, kept
    assert "visitor openai/other-visitor" in plan and "visitor openai/fake-visitor" in old_plan
    assert main(["compare", adopted]) == 0  # the adopted point runs under today's visitor
    assert "1 uncertain" in capsys.readouterr().out


def test_a_frozen_agent_runs_at_the_temperature_it_recorded(cli, capsys, monkeypatch):
    from app.settings import get_settings

    def at(temperature):
        monkeypatch.setenv("MODEL_TEMPERATURE", temperature)
        get_settings.cache_clear()

    at("0.2")
    assert main(["point", "save", "cool", *SELECTION]) == 0
    at("0.7")
    cli.clear()
    assert main(["compare", "cool", "--cache", "off"]) == 0
    out = capsys.readouterr().out
    # both versions asked, each at its own temperature (the point's, today's)
    assert sorted({b.get("temperature") for b in cli}) == [0.2, 0.7]
    assert "0 improved · 0 regressed · 2 unchanged" in out
    # and so in the gate, the point named or found by model and plan
    for named in (["--against", "cool"], []):
        cli.clear()
        assert main(["gate", *SELECTION, *named, "--cache", "off"]) == 0
        assert "comparison point" in capsys.readouterr().out
        assert sorted({b.get("temperature") for b in cli}) == [0.2, 0.7]


async def test_a_frozen_agent_is_given_the_tool_steps_it_recorded(server_conninfo, store_template,
                                                                   tmp_path, monkeypatch, capsys):
    """A model that always asks for a tool is stopped by each version's own step limit: the
    point's recorded one, and today's."""
    from app.settings import get_settings
    from evals.execute.retries import MAX_ATTEMPTS

    search = {"id": "call_1", "type": "function",
              "function": {"name": "search_catalog", "arguments": '{"query": "laser"}'}}

    def always_a_tool(body):
        return 200, completion(ANSWER["text"] if not body.get("tools") else None,
                               None if not body.get("tools") else [search])

    def limit(steps):
        monkeypatch.setenv("MAX_TOOL_STEPS", steps)
        get_settings.cache_clear()

    async with scratch_database(server_conninfo, prefix="test_cli",
                                template=store_template) as info:
        with fake_openai_server(always_a_tool) as (base, got):
            with cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_CHAT": "openai/fake-chat",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path)}):
                limit("1")
                assert await asyncio.to_thread(main, ["point", "save", "short", *SELECTION]) == 0
                limit("3")
                got.clear()
                assert await asyncio.to_thread(
                    main, ["compare", "short", "--cache", "off"]) == 0
                compared = list(got)
                got.clear()
                assert await asyncio.to_thread(
                    main, ["gate", *SELECTION, "--against", "short", "--cache", "off"]) == 0
                gated = list(got)
    # The bound counts each version's own rounds: 2 cases × (1 + 1 and 3 + 1 calls) × attempts,
    # and the gate's two repetitions twice that.
    out = capsys.readouterr().out
    assert f"at most {2 * (2 + 4) * MAX_ATTEMPTS} " in out
    assert f"at most {2 * 2 * (2 + 4) * MAX_ATTEMPTS} " in out

    def rounds(requests):
        """Each turn's last request (no tools offered) carries the tool rounds it was allowed:
        one per item for the point's agent, three for today's."""
        return sorted(sum(m["role"] == "tool" for m in b["messages"])
                      for b in requests if not b.get("tools"))

    assert rounds(compared) == [1, 1, 3, 3]
    assert rounds(gated) == [1] * 4 + [3] * 4  # the gate: two repetitions of each
