"""The checks measured against labelled answers: every labelled item loads and agrees with its
check, a file's errors name file:line, and a disagreement (or a check that raises) is reported
with its reason and the answer."""

import io

import pytest

from evals.calibration.accuracy import LABELLED_DIR, load_items, load_sets, measure, report
from evals.checks import authored
from evals.load.cases import CaseFileError

ITEM = ('- answer: "{answer}"\n  check: {{kind: no_unknown_tools}}\n  verdict: {verdict}\n'
        '  adversarial: false\n  why: "w"\n')


@pytest.fixture(scope="module")
def sets():
    return load_sets()


@pytest.fixture(scope="module")
def tuned(sets):
    """The tuned corpus, measured once for the module."""
    return measure([entry for entry in sets if entry[2] == "tuned"])


@pytest.fixture(scope="module")
def held(sets):
    """The held-out sets, measured once for the module (the seen sets gate nothing: their
    report is `python -m evals accuracy`'s, and the seen kind's test uses sets of its own)."""
    return measure([entry for entry in sets if entry[2] == "held-out"])


def test_every_tuned_item_agrees_with_its_check_when_it_decides_and_every_kind_is_labelled(
        tuned):
    assert len(tuned) >= 100
    disagreements = [(o.where, o.reason) for o in tuned if o.disagrees]
    assert disagreements == []
    assert {o.kind for o in tuned} == set(authored())
    assert {p.name for p in LABELLED_DIR.glob("*.yaml")} == {
        o.where.split(":")[0] for o in tuned}
    # The tuned corpus is mostly decided: a check that abstained everywhere would agree too.
    decided = [o for o in tuned if o.labelled and o.decided]
    assert len(decided) / len([o for o in tuned if o.labelled]) > 0.85


def test_held_out_sets_are_reported_apart_and_pass_nothing_a_reader_fails_in_another_language(
        tuned, held):
    outcomes = tuned + held
    assert {o.where.split(":")[0] for o in held} == {
        f"heldout/{p.name}" for p in (LABELLED_DIR / "heldout").glob("*.yaml")}
    foreign = [o for o in held if o.language != "en"]
    assert foreign and all(o.got == "undecided" for o in foreign)
    out = io.StringIO()
    report(outcomes, out)
    text = out.getvalue()
    assert text.index("tuned sets") < text.index("held-out sets")
    assert "language es" in text


def test_seen_sets_are_reported_apart_from_the_tuned_and_the_held_out_and_not_gated(tmp_path):
    for folder, answer in (("", "We have no Glowforge."), ("seen", "You can use the Glowforge."),
                           ("heldout", "We have no Glowforge.")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "set.yaml").write_text(ITEM.format(answer=answer, verdict="pass"))
    outcomes = measure(load_sets(tmp_path))
    assert [(o.where, o.set, o.got) for o in outcomes] == [
        ("set.yaml:1", "tuned", "pass"), ("seen/set.yaml:1", "seen", "fail"),
        ("heldout/set.yaml:1", "held-out", "pass")]
    out = io.StringIO()
    assert report(outcomes, out) == 1.0  # the seen set's disagreement gates nothing
    text = out.getvalue()
    assert text.index("tuned sets") < text.index("seen sets") < text.index("held-out sets")
    assert "≠ seen/set.yaml:1 no_unknown_tools: labelled pass, check says fail" in text
    # a seen folder or file named alone is read as seen
    assert {o.set for o in measure(load_sets(tmp_path / "seen"))} == {"seen"}
    assert {o.set for o in measure(load_sets(tmp_path / "seen" / "set.yaml"))} == {"seen"}


def test_a_disagreement_is_reported_with_the_reason_and_the_answer(tmp_path):
    (tmp_path / "mine.yaml").write_text(
        ITEM.format(answer="You can use the Glowforge.", verdict="pass")
        + ITEM.format(answer="We have no Glowforge.", verdict="pass"))
    outcomes = measure(load_items(tmp_path))
    assert [(o.where, o.expected, o.got) for o in outcomes] == [
        ("mine.yaml:1", "pass", "fail"), ("mine.yaml:6", "pass", "pass")]
    out = io.StringIO()
    assert report(outcomes, out) == 0.5
    text = out.getvalue()
    assert "no_unknown_tools               2     0   50.0%    0.0%      0      1" in text
    assert "≠ mine.yaml:1 no_unknown_tools: labelled pass, check says fail" in text
    assert "answer: “You can use the Glowforge.”" in text
    assert "kinds with no labelled item: called_tool" in text


def test_undecided_items_count_against_coverage_not_agreement_and_false_passes_are_counted(
        tmp_path):
    (tmp_path / "mine.yaml").write_text(
        ITEM.format(answer="The Trotec is much faster than a Glowforge.", verdict="fail")
        + ITEM.format(answer="We have no Glowforge.", verdict="fail")
        + ITEM.format(answer="We have no Glowforge.", verdict="unclear"))
    outcomes = measure(load_items(tmp_path))
    assert [o.got for o in outcomes] == ["undecided", "pass", "pass"]
    out = io.StringIO()
    assert report(outcomes, out) == 0.0
    text = out.getvalue()
    # 2 labelled items, 1 decided and wrong (a false pass), 1 undecided, 1 unclear
    assert "no_unknown_tools               2     0    0.0%   50.0%      1      0  (1 unclear)" \
        in text
    assert "? mine.yaml:1 no_unknown_tools: labelled fail, check says undecided" in text


def test_a_check_that_raises_disagrees_with_its_label(tmp_path, monkeypatch):
    import evals.calibration.accuracy as accuracy

    def broken(item):
        raise RuntimeError("bug in the check")

    monkeypatch.setattr(accuracy, "_run", broken)
    (tmp_path / "a.yaml").write_text(ITEM.format(answer="x", verdict="fail"))
    [outcome] = measure(load_items(tmp_path))
    assert outcome.got == "error" and not outcome.agrees
    assert outcome.reason == "the check raised RuntimeError: bug in the check"


@pytest.mark.parametrize(("text", "error"), [
    (ITEM.format(answer="x", verdict="maybe"),
     "a.yaml:1: 1 validation error for LabelledItem verdict"),
    (ITEM.replace("no_unknown_tools", "no_such_kind").format(answer="x", verdict="pass"),
     "a.yaml:1: unknown assertion kind 'no_such_kind'"),
    (ITEM.replace("no_unknown_tools", "mentions_tool").format(answer="x", verdict="pass"),
     "a.yaml:1: 1 validation error for ValueArg value"),  # the kind's own arguments
    ("just: a mapping\n", "a.yaml:1: a labelled file is a list of items"),
])
def test_a_bad_labelled_file_names_file_and_line(tmp_path, text, error):
    (tmp_path / "a.yaml").write_text(text)
    with pytest.raises(CaseFileError) as refused:
        load_items(tmp_path)
    assert any(e.startswith(error) for e in refused.value.errors), refused.value.errors


def test_a_folder_without_labelled_files_is_an_error(tmp_path):
    with pytest.raises(CaseFileError, match="no labelled"):
        load_items(tmp_path)
