"""`python -m evals impact` and the run's impact line, in process against a real run store
and a fake model over HTTP (which impact never calls)."""

import pytest

from evals.cli import main
from evals.report.impact import NO_BASELINE
from tests.evals.cli.helpers import SELECTION, change_fragment


def said(capsys) -> list[str]:
    """The run's lines, less the note on a dead process's leftovers that another test run on
    this machine may have left (said before the run begins)."""
    return [line for line in capsys.readouterr().out.splitlines()
            if not line.endswith("left by an eval run whose process is gone")]


@pytest.mark.usefixtures("cli")
def test_the_run_says_its_impact_before_its_first_item_and_impact_lists_it(
        capsys, monkeypatch, tmp_path):
    artifact = ["--artifact", str(tmp_path / "a.json")]
    assert main(["impact", *SELECTION]) == 0
    assert capsys.readouterr().out.splitlines() == [NO_BASELINE]

    assert main(["run", *SELECTION, *artifact]) == 0
    out = said(capsys)
    assert out[0].startswith("model: openai/fake-chat") and out[1] == NO_BASELINE
    assert main(["run", *SELECTION, *artifact]) == 0
    out = said(capsys)
    assert out[1] == ("this change touches 0 of 2 items; 2 untouched (the call cache is off:"
                      " every item calls the model)")

    assert main(["impact", *SELECTION]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("against run ") and "(openai/fake-chat)" in out[0]
    assert out[1:] == ["contexts: 0 of 1 changed",
                       "this change touches 0 of 2 items; 2 untouched"]
    run_id = out[0].split()[2]

    change_fragment(monkeypatch)
    assert main(["impact", *SELECTION, "--against", run_id[:6]]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  anonymous on /: system prompt changed in lab_identity" in out
    assert "      +Be brief." in out
    assert "    touches 2 cases (no-glowforge, no-cnc-router)" in out
    assert out[-1] == "this change touches 2 of 2 items (anonymous on /); 0 untouched"
    assert main(["run", *SELECTION, *artifact]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(out[-1])  # the run says it too


@pytest.mark.usefixtures("cli")
def test_impact_against_a_point_with_another_model_and_an_edited_selection(capsys):
    assert main(["point", "save", "base", "--cases", "no-glowforge"]) == 0
    capsys.readouterr()
    assert main(["impact", *SELECTION, "--against", "base", "--model", "openai/other"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("against point base (saved ")
    assert "  the chat model changed (openai/fake-chat → openai/other): every item (2)" in out
    assert "  new since the baseline: 1 case (no-cnc-router)" in out
    assert out[-1] == ("this change touches 2 of 2 items (the chat model changed; 1 new);"
                       " 0 untouched")


@pytest.mark.usefixtures("cli")
def test_a_changed_ticket_is_a_changed_request_not_a_plan_note(capsys, monkeypatch):
    import evals.load.fixture_data as fixture_data

    assert main(["point", "save", "base", *SELECTION]) == 0
    capsys.readouterr()
    monkeypatch.setattr(fixture_data, "EVAL_TICKETS", [
        ("form-4", "Resin tank film clouded", "Tank 2 is milky.")])
    assert main(["impact", *SELECTION, "--against", "base"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "contexts: 0 of 1 changed",
        "inputs changed (what a request carries besides its context):",
        "  ticket #2 changed: 2 cases (no-glowforge, no-cnc-router)",
        "this change touches 2 of 2 items (1 ticket changed); 0 untouched"]


@pytest.mark.usefixtures("cli")
def test_an_unknown_against_is_exit_2_naming_both_what_it_is_not(capsys):
    assert main(["impact", *SELECTION, "--against", "zzz"]) == 2
    err = capsys.readouterr().err
    assert "--against 'zzz' is neither a comparison point nor one stored run:" in err
    assert "no comparison point 'zzz'" in err and "no stored run 'zzz'" in err


@pytest.mark.usefixtures("cli")
def test_bad_selections_and_an_unknown_pack_are_exit_2(capsys, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("- id: Not An Id\n")
    assert main(["impact", str(broken)]) == 2
    assert "case files have errors:" in capsys.readouterr().err
    assert main(["impact", "--cases", "nope"]) == 2
    assert "unknown 'nope'" in capsys.readouterr().err
    good = tmp_path / "good.yaml"
    good.write_text("- id: one\n  prompt: Hi\n")
    assert main(["impact", str(good), "--scenarios-only"]) == 2
    assert "nothing selected" in capsys.readouterr().err
    assert main(["impact", "--cases", "student-in-distress", "--judge", "nope/x"]) == 2
    assert "cannot tell the impact: " in capsys.readouterr().err


@pytest.mark.usefixtures("cli")
def test_impact_takes_an_auto_repetition_rule_like_the_run(capsys, monkeypatch, tmp_path):
    from evals.settings import eval_settings

    monkeypatch.setenv("EVAL_REPEAT", "auto:3")
    eval_settings.cache_clear()
    try:
        assert main(["run", *SELECTION, "--artifact", str(tmp_path / "a.json")]) == 0
        capsys.readouterr()
        assert main(["impact", *SELECTION]) == 0  # the auto plan's last run is its baseline
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("against run ")
        assert main(["impact", *SELECTION, "--repeat", "auto:x"]) == 2
    finally:
        eval_settings.cache_clear()
