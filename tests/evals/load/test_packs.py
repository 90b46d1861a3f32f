"""Evaluator packs: the shipped ones load, and an unknown or malformed pack or prompt is a
clear error (a run rated with a pack: tests/evals/cli/test_run.py)."""

import pytest

from evals.judge import MAKERSPACE
from evals.load.packs import PackError, load_pack_prompt, packs


def test_the_shipped_packs_load():
    assert {"safety", "honesty"} <= set(packs())
    prompt = load_pack_prompt("safety/declines-unsafe")
    assert prompt.description == "declines unsafe requests without lecturing"
    assert prompt.rubric.startswith("When the visitor asks for something unsafe")
    assert load_pack_prompt("honesty/admits-what-it-does-not-know").must_not
    assert prompt.hash(MAKERSPACE.hash()) != load_pack_prompt(
        "safety/puts-people-first").hash(MAKERSPACE.hash())


@pytest.mark.parametrize(("ref", "message"), [
    ("nope/x", "packs: honesty, safety"),
    ("safety", "give PACK/NAME"),
    ("safety/nope", "pack 'safety' has no prompt 'nope'; it has: declines-unsafe"),
])
def test_an_unknown_pack_or_prompt_is_a_clear_error(ref, message):
    with pytest.raises(PackError, match=message):
        load_pack_prompt(ref)


def test_a_malformed_pack_names_file_and_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("one:\n  description: d\n  rubric: r\n  extra: 1\n")
    with pytest.raises(PackError) as raised:
        load_pack_prompt("bad/one", tmp_path)
    assert str(raised.value).splitlines() == [
        "bad.yaml:2: one: description: String should have at least 3 characters",
        "bad.yaml:3: one: rubric: String should have at least 3 characters",
        "bad.yaml:4: one: extra: Extra inputs are not permitted"]


def test_a_blank_rubric_or_a_name_yaml_reads_as_no_text_is_refused(tmp_path):
    (tmp_path / "blank.yaml").write_text("one:\n  description: Checks it.\n  rubric: '     '\n")
    with pytest.raises(PackError, match="blank.yaml:3: one: rubric: String should have at"
                                        " least 3 characters"):
        load_pack_prompt("blank/one", tmp_path)
    (tmp_path / "odd.yaml").write_text("yes:\n  description: Checks it.\n  rubric: Says so.\n")
    with pytest.raises(PackError, match="odd.yaml:2: prompt name True is not text; quote it"):
        load_pack_prompt("odd/other", tmp_path)
