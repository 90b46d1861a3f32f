"""The authoring commands: `draft` refuses a bad count before it starts anything."""


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
