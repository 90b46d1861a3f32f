"""The authoring commands: `draft` refuses a bad count before it starts anything, and asks
the model once for the same drafts (the call cache); `from-conversations` counts and warns."""


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


async def test_drafting_twice_with_the_same_model_makes_its_call_once(
        server_conninfo, tmp_path, monkeypatch):
    import asyncio
    import json

    from app.db import scratch_database
    from evals.cli import main
    from tests.evals.helpers import cli_environment
    from tests.fake_openai import completion, fake_openai_server

    drafted = {"id": "drafted-wash-time", "prompt": "How long do I wash Form 4 prints?",
               "assert": [{"kind": "called_tool", "value": "search_manual"}]}
    async with scratch_database(server_conninfo, prefix="test_draft") as info:
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
