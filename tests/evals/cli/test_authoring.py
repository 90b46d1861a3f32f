"""The authoring commands: `draft` refuses a bad count before it starts anything, and asks
the model once for the same drafts (the call cache); `from-conversations` counts, warns, prints
or writes its cases, and refuses what it cannot use; `prompt` shows what a role is told."""

import pytest


def test_the_draft_command_checks_its_count_first(capsys, tmp_path):
    from evals.cli import main

    out = tmp_path / "drafts.yaml"
    assert main(["draft", "--count", "30", "--out", str(out)]) == 2
    assert "--count must be 1 to 25" in capsys.readouterr().err
    assert not out.exists()  # refused before any model or database was started


async def test_from_conversations_counts_each_kind_and_says_what_it_cannot_rule_out(
        db, tmp_path, monkeypatch, capsys):
    import asyncio

    from evals.cli import main
    from tests.evals.authoring.test_from_conversations import Records, failed
    from tests.evals.helpers import cli_environment

    r = Records(db)
    cid = await r.conversation("u_morgan", True)
    await r.turn(cid, "Hi, this is Morgan Lee, 555 867 5309, 12 Elm Street: is the Form 4"
                      " free?", calls=[failed()])
    out = tmp_path / "cases.yaml"
    with cli_environment(monkeypatch, {"DATABASE_URL": db.conninfo, "DATA_DIR": str(tmp_path)}):
        code = await asyncio.to_thread(main, ["from-conversations", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    assert "1 case(s) · personal data replaced: 1 name, 1 phone, 1 address, 0 email" in err
    assert "could not rule out (name): names the English model does not tag" in err
    assert "could not rule out (address):" in err and "could not rule out (phone):" in err
    written = out.read_text()
    assert "Morgan" not in written and "5309" not in written and "Elm" not in written
    assert "[name], [phone], [address]: is the Form 4 free?" in written



async def test_from_conversations_writes_scrubbed_tool_calls_and_says_what_it_held_back(
        db, tmp_path, monkeypatch, capsys):
    import asyncio

    from evals.cli import main
    from tests.evals.authoring.test_from_conversations import Records
    from tests.evals.helpers import cli_environment

    r = Records(db)
    cid = await r.conversation("u_reporter", True)
    await r.turn(cid, "the form 4 tank is cracked", calls=[
        {"name": "report_issue", "outcome": "error", "result": {"error": "x"},
         "arguments": {"machine": "form-4", "reporter": "dana whitfield"}}])
    other = await r.conversation("u_cue", True)
    await r.turn(other, "is unit 4 free? je m'appelle 4real", calls=[
        {"name": "get_unit_status", "arguments": {}, "result": {"error": "x"},
         "outcome": "error"}])
    out = tmp_path / "cases.yaml"
    with cli_environment(monkeypatch, {"DATABASE_URL": db.conninfo, "DATA_DIR": str(tmp_path)}):
        code = await asyncio.to_thread(main, ["from-conversations", "--out", str(out)])
    err = capsys.readouterr().err
    written = out.read_text()
    assert code == 0 and "1 case(s) · personal data replaced: 1 name" in err
    assert ('# tool call: report_issue {"machine": "form-4", "reporter": "[name]"}\n'
            in written) and "dana" not in written and "4real" not in written
    assert "held back for review: 1 case(s) where a name may be left" in err
    assert "held back: turn 2 (tool-error): a name may follow “je m'appelle”" in err


async def test_drafting_twice_with_the_same_model_makes_its_call_once(
        server_conninfo, store_template, tmp_path, monkeypatch):
    import asyncio
    import json

    from app.db import scratch_database
    from evals.cli import main
    from tests.evals.helpers import cli_environment
    from tests.fake_openai import completion, fake_openai_server

    drafted = {"id": "drafted-wash-time", "prompt": "How long do I wash Form 4 prints?",
               "assert": [{"kind": "called_tool", "value": "search_manual"}]}
    async with scratch_database(server_conninfo, prefix="test_draft",
                                template=store_template) as info:
        with fake_openai_server(lambda body: (200, completion(json.dumps(drafted)))) \
                as (base, received), cli_environment(monkeypatch, {
                    "DATABASE_URL": info, "MODEL_DRAFT": "openai/fake-draft",
                    "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                    "DATA_DIR": str(tmp_path), "EVAL_CACHE": "reuse"}):
            outs = [tmp_path / "one.yaml", tmp_path / "two.yaml"]
            for out in outs:
                assert await asyncio.to_thread(
                    main, ["draft", "--count", "1", "--out", str(out)]) == 0
            assert len(received) == 1  # the second drafting replayed it
            assert await asyncio.to_thread(
                main, ["draft", "--count", "1", "--cache", "refresh", "--out",
                       str(outs[1])]) == 0
            assert len(received) == 2  # refresh asks anew
    texts = [o.read_text().split("\n", 1)[1] for o in outs]  # past the dated first line
    assert texts[0] == texts[1] and "- id: drafted-wash-time" in texts[0]


def test_prepare_never_writes_into_the_suite_and_checks_its_input_first(capsys, tmp_path):
    from evals.cli import main
    from evals.settings import SCENARIOS_DIR

    inside = SCENARIOS_DIR / "prepared-by-a-test.yaml"
    for out in (inside, SCENARIOS_DIR / "problem-reports.yaml"):
        assert main(["prepare", "--out", str(out)]) == 2
        assert "prepare never writes under" in capsys.readouterr().err
    assert not inside.exists()
    assert main(["prepare", "--count", "11"]) == 2
    assert "--count must be 1 to 10" in capsys.readouterr().err
    assert main(["prepare", "--capability", "lasers"]) == 2
    assert "unknown capability 'lasers'" in capsys.readouterr().err
    assert main(["prepare", "--page", "/tools/glowforge"]) == 2
    assert "toolId 'glowforge'" in capsys.readouterr().err
    mine = tmp_path / "mine.yaml"
    mine.write_text("- id: written-by-hand\n  visitor: {who: a visitor, wants: help}\n")
    assert main(["prepare", "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "does not write over a scenario a person wrote or edited" in err
    assert "mine.yaml:1: 'written-by-hand' has no '# prepared:' line" in err
    assert mine.read_text().startswith("- id: written-by-hand")  # refused before any model


PREPARED = {"id": "prepared-smoke-report",
            "visitor": {"who": "an invented student", "wants": "to report smoke from a machine"},
            "criteria": [{"statement": "The assistant files the report."}],
            "expect_actions": [{"tool": "report_issue", "result": {"filed": True}}]}


async def test_prepare_writes_scenarios_for_review_and_keeps_edits(server_conninfo, store_template,
                                                                   tmp_path, monkeypatch, capsys):
    import asyncio
    import json

    from app.db import scratch_database
    from evals.cli import main
    from evals.load.scenarios import load_scenarios
    from tests.evals.helpers import cli_environment
    from tests.fake_openai import completion, fake_openai_server

    def draft(body):
        asked = body["messages"][-1]["content"]
        if "of the kind 'goal'" in asked:
            return 200, completion(json.dumps(PREPARED))
        return 200, completion("I would rather not.")

    out = tmp_path / "review" / "prepared.yaml"
    out.parent.mkdir()
    args = ["prepare", "--capability", "issue_reports", "--count", "2", "--out", str(out)]
    async with scratch_database(server_conninfo, prefix="test_cli",
                                template=store_template) as info:
        with fake_openai_server(draft) as (base, received), cli_environment(monkeypatch, {
                "DATABASE_URL": info, "MODEL_DRAFT": "openai/fake-draft",
                "MODEL_API_BASE": base, "OPENAI_API_KEY": "sk-test",
                "DATA_DIR": str(tmp_path)}):
            assert await asyncio.to_thread(main, args) == 0
            err = capsys.readouterr().err
            assert "1 valid · 1 rejected · 0 in the suite already · missing:" \
                   " issue_reports/unsure" in err
            assert len(received) == 2 and {b["model"] for b in received} == {"fake-draft"}
            (scenario,), _ = load_scenarios(out.parent, {})
            assert scenario.id == "prepared-smoke-report" and scenario.group == "issue reports"
            assert await asyncio.to_thread(main, args) == 0  # untouched drafts: written again
            capsys.readouterr()
            out.write_text(out.read_text().replace("files the report", "files it"))
            line = out.read_text().splitlines().index("- id: prepared-smoke-report") + 1
            assert await asyncio.to_thread(main, args) == 2
            assert f"prepared.yaml:{line}: 'prepared-smoke-report' was edited since it was" \
                   " prepared" in capsys.readouterr().err
            assert "files it" in out.read_text() and len(received) == 4


async def test_from_conversations_refuses_a_bad_count_and_an_empty_store(db, tmp_path,
                                                                        monkeypatch, capsys):
    import asyncio

    from evals.cli import main
    from tests.evals.helpers import cli_environment

    out = tmp_path / "cases.yaml"
    with cli_environment(monkeypatch, {"DATABASE_URL": db.conninfo, "DATA_DIR": str(tmp_path)}):
        assert await asyncio.to_thread(main, ["from-conversations", "--count", "0"]) == 2
        assert "--count must be 1 to 200, not 0" in capsys.readouterr().err
        assert await asyncio.to_thread(
            main, ["from-conversations", "--out", str(out)]) == 2  # nothing stored
        assert "no stored conversations" in capsys.readouterr().err
    for turns, said in (("4,x", "turn ids are numbers: '4,x'"), (",", "name at least one turn")):
        assert main(["from-conversations", "--turns", turns]) == 2
        assert said in capsys.readouterr().err
    assert not out.exists()


async def test_from_conversations_prints_its_cases_and_leaves_a_photo_case_to_out(
        db, tmp_path, monkeypatch, capsys):
    import asyncio
    import uuid

    import yaml

    from evals.cli import main
    from tests.evals.authoring.test_from_conversations import (
        T0,
        Records,
        failed,
        jpeg_with_gps,
    )
    from tests.evals.helpers import cli_environment

    r = Records(db)
    photo = str(uuid.uuid4())
    await db.execute("INSERT INTO attachments (id, name, content_type, data, created_at)"
                     " VALUES (%s, 'p.png', 'image/png', %s, %s)", (photo, jpeg_with_gps(), T0))
    cid = await r.conversation("u_photo", True)
    await r.turn(cid, "what is this machine?", photo=photo)
    await r.turn(cid, "is the Form 4 free?", calls=[failed()])  # a tool-error case
    out = tmp_path / "cases.yaml"
    with cli_environment(monkeypatch, {"DATABASE_URL": db.conninfo, "DATA_DIR": str(tmp_path)}):
        assert await asyncio.to_thread(main, ["from-conversations"]) == 0
        printed = capsys.readouterr()
        assert await asyncio.to_thread(main, ["from-conversations", "--out", str(out)]) == 0
        written = capsys.readouterr()
    # printed: the case without its photo, and why the photo case is left out
    cases = yaml.safe_load(printed.out)
    assert [c["prompt"] for c in cases] == ["is the Form 4 free?"]
    assert "1 photo case(s): their photos need --out to be written beside the cases" in \
        printed.err
    # to a file: both cases, the photo beside them
    folder = tmp_path / "cases-photos"
    assert f"photos: {folder}" in written.out and f"cases: {out}" in written.out
    [kept] = [c for c in yaml.safe_load(out.read_text()) if "photos" in c]
    assert [p.name for p in folder.iterdir()] == kept["photos"]


@pytest.mark.usefixtures("cli")
def test_the_prompt_command_prints_what_a_role_is_told_and_refuses_an_unknown_page(capsys):
    import json

    from evals.cli import main

    assert main(["prompt", "--as", "staff", "--json"]) == 0
    told = json.loads(capsys.readouterr().out)
    assert told["role"] == "staff" and told["page"] == "/"
    assert told["system_prompt"] and "search_catalog" in [
        t["function"]["name"] for t in told["tools"]]
    assert main(["prompt", "--as", "staff", "--page", "/nowhere"]) == 2
    assert "page '/nowhere': unknown page '/nowhere'" in capsys.readouterr().err
