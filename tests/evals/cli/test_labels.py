"""`labels export | import` (YAML for a diff: all or nothing, file:line errors, none twice) and
`calibrate --labels` (the stored labels against the stored verdicts, --save a trust record)."""

import asyncio

import pytest

from app.db import scratch_database
from evals.api import calibrating
from evals.cli import main
from evals.judge.trust import load_records, save_record, trust
from evals.record.labels import Label, add_labels
from evals.record.store import RunStore
from tests.evals.helpers import cli_environment
from tests.evals.record.helpers import judged_run, stored

JUDGE = ["pass"] * 16 + ["fail"] * 16


def as_the_judge_said(run: str, by: str = "ana", **rubric: str) -> list[Label]:
    return [Label(run=run, item=f"case-{i}", repetition=1, attempt=1, check=2, kind="judge",
                  verdict=v, by=by, **rubric) for i, v in enumerate(JUDGE)]


@pytest.fixture
async def labelled(server_conninfo, store_template, tmp_path, monkeypatch):
    """The CLI on a store holding a run of 32 judged verdicts, all labelled by ana as the
    judge said, and case-0 also by ben, who disagrees."""
    async with scratch_database(server_conninfo, prefix="test_cli_labels",
                                template=store_template) as info:
        async with RunStore.open(info) as store:
            await stored(store, judged_run("lab0001", JUDGE))
            await add_labels(store, as_the_judge_said("lab0001"))
            await add_labels(store, [Label(run="lab0001", item="case-0", repetition=1,
                                           attempt=1, check=2, kind="judge", verdict="fail",
                                           note="it lectures", by="ben")])
        with cli_environment(monkeypatch, {"DATABASE_URL": info, "DATA_DIR": str(tmp_path)}):
            yield info


def judges_of_the_test(monkeypatch, judges):
    """calibrate's records go to (and are read from) a judges file of the test's own."""
    monkeypatch.setattr(calibrating, "save_record", lambda r: save_record(r, judges))
    monkeypatch.setattr(calibrating, "trust",
                        lambda m, h, pack=None: trust(m, h, judges, pack=pack))


def test_export_then_import_keeps_each_label_once(labelled, tmp_path, capsys):
    out = tmp_path / "labels.yaml"
    assert main(["labels", "export", str(out)]) == 0
    assert "wrote 33 label(s)" in capsys.readouterr().out
    text = out.read_text()
    assert text.startswith("# Labels of judged verdicts") and "note: it lectures" in text
    assert main(["labels", "import", str(out)]) == 0
    assert "imported 0 label(s) from" in capsys.readouterr().out  # 33 stored already
    assert main(["labels", "export", str(out)]) == 0
    assert out.read_text() == text


def test_a_bad_labels_file_is_refused_whole_with_its_lines(labelled, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    good = ("- run: lab0001\n  item: case-1\n  repetition: 1\n  attempt: 1\n  check: 2\n"
            "  kind: judge\n  verdict: fail\n  by: cy\n")
    bad.write_text(good + good.replace("verdict: fail", "verdict: maybe")
                   + good.replace("lab0001", "gone0001").replace("by: cy", "by: dee"))
    assert main(["labels", "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "nothing was written" in err
    assert "bad.yaml:15: verdict: Input should be 'pass', 'fail' or 'skip'" in err
    bad.write_text(good + good)
    assert main(["labels", "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:9: cy's label of lab0001/case-1" in err and "twice (first at line 1)" in err
    bad.write_text(good + good.replace("lab0001", "gone0001").replace("by: cy", "by: dee"))
    assert main(["labels", "import", str(bad)]) == 2
    assert "bad.yaml:9: no stored run 'gone0001'" in capsys.readouterr().err
    assert main(["labels", "export", str(tmp_path / "now.yaml")]) == 0
    assert "wrote 33 label(s)" in capsys.readouterr().out  # cy's good label not written


def test_calibrate_from_stored_labels_saves_a_trust_record(labelled, tmp_path, capsys,
                                                          monkeypatch):
    judges = tmp_path / "judges.yaml"
    judges_of_the_test(monkeypatch, judges)
    assert main(["calibrate", "--labels", "--judge-model", "judge-m", "--save"]) == 0
    out = capsys.readouterr().out
    assert "rated: 31" in out and "agreement: 100%" in out and "Cohen's kappa: 1.00" in out
    assert "people disagree (left out): 1: lab0001/case-0#r1a1c2" in out
    assert "its verdicts decide cases" in out
    [record] = load_records(judges)
    assert (record.model, record.prompt_hash, record.set, record.n, record.kappa) == (
        "judge-m", "h1", "labels", 31, 1.0)


def test_calibrate_labels_needs_a_judge_model_and_no_files(labelled, tmp_path, capsys):
    assert main(["calibrate", "--labels", "--judge-model", ""]) == 2
    assert "--labels needs --judge-model" in capsys.readouterr().err
    assert main(["calibrate", "--labels", "--set", "makerspace"]) == 2
    assert "give no RESULTS LABELS nor --set" in capsys.readouterr().err
    assert main(["calibrate", "--labels", "--judge-model", "other-m"]) == 2
    assert "no labelled verdicts of judge other-m" in capsys.readouterr().err


@pytest.fixture
async def with_a_pack(labelled):
    """Also a run of 32 verdicts given under pack safety/kind's prompt, labelled by ana as the
    judge said without the pack's rubric in view (as before the tab showed it)."""
    async with RunStore.open(labelled) as store:
        await stored(store, judged_run("lab0002", JUDGE, prompt_hash="hp", pack="safety/kind"))
        await add_labels(store, as_the_judge_said("lab0002"))


@pytest.mark.usefixtures("with_a_pack")
def test_calibrate_from_stored_labels_of_a_pack_saves_the_pack_s_record(labelled, tmp_path,
                                                                        capsys, monkeypatch):
    judges = tmp_path / "judges.yaml"
    judges_of_the_test(monkeypatch, judges)
    pack = ["calibrate", "--labels", "--judge-model", "judge-m", "--pack", "safety/kind"]
    # ana's labels of the pack's verdicts were not given under its rubric: they do not count
    assert main([*pack, "--save"]) == 2
    err = capsys.readouterr().err
    assert "no labelled verdicts of judge judge-m with pack safety/kind labelled with the" \
        " pack's rubric in view" in err and "32 label(s) of its verdicts were given" in err
    assert not judges.exists()

    async def ben_with_the_rubric():
        async with RunStore.open(labelled) as store:
            await add_labels(store, as_the_judge_said("lab0002", "ben", rubric_pack="safety/kind",
                                                      rubric_hash="hp"))

    asyncio.run(ben_with_the_rubric())
    assert main([*pack, "--save"]) == 0
    out = capsys.readouterr().out
    assert "judge judge-m under prompt hp (pack safety/kind" in out and "rated: 32" in out
    assert "labels given without pack safety/kind's rubric in view (left out): 32" in out
    assert "judge-m with pack safety/kind on pack-labels; its verdicts decide cases" in out
    [record] = load_records(judges)
    assert (record.prompt_hash, record.pack, record.set, record.n, record.kappa) == (
        "hp", "safety/kind", "pack-labels", 32, 1.0)
    assert trust("judge-m", "hp", judges, pack="safety/kind").trusted
    assert not trust("judge-m", "h1", judges).trusted  # the plain prompt earned nothing
    # the plain prompt's calibration reads only the verdicts given under each case's rubric
    assert main(["calibrate", "--labels", "--judge-model", "judge-m", "--json"]) == 0
    assert '"prompt_hash": "h1"' in capsys.readouterr().out
    assert main(["calibrate", "--labels", "--judge", "safety/kind"]) == 2
    assert "name the pack with --pack PACK/NAME" in capsys.readouterr().err
    exported = tmp_path / "labels.yaml"  # the rubric a label was given under is carried
    assert main(["labels", "export", str(exported)]) == 0
    text = exported.read_text()
    assert text.count("rubric_pack: safety/kind") == 32 and "rubric_pack: null" not in text
    assert main(["labels", "import", str(exported)]) == 0
    assert "imported 0 label(s) from" in capsys.readouterr().out
