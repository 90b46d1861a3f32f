"""The authoring commands: `draft` refuses a bad count before it starts anything."""


def test_the_draft_command_checks_its_count_first(capsys, tmp_path):
    from evals.cli import main

    out = tmp_path / "drafts.yaml"
    assert main(["draft", "--count", "30", "--out", str(out)]) == 2
    assert "--count must be 1 to 25" in capsys.readouterr().err
    assert not out.exists()  # refused before any model or database was started
