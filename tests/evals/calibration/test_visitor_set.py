"""The labelled visitor transcripts: the set loads, every kind is labelled, broken and clean
halves; the simulator checks measured on it never flag a clean visitor; a wrong set is
refused with its line."""

import pytest

from evals.bench.visitor import main
from evals.calibration.visitor_set import (
    VISITOR_SET,
    VISITOR_SET_2,
    VisitorSetError,
    load_transcripts,
    measure,
    render,
)
from evals.record.visitor import KINDS


def test_the_first_blind_set_has_every_kind_and_a_clean_half():
    transcripts = load_transcripts()
    broken = [t for t in transcripts if t.failures]
    assert len(transcripts) >= 40 and abs(2 * len(broken) - len(transcripts)) <= 4
    assert {f.kind for t in broken for f in t.failures} == set(KINDS)


@pytest.mark.parametrize("path", [VISITOR_SET, VISITOR_SET_2], ids=lambda p: p.name)
def test_the_checks_measured_on_it_never_flag_a_clean_visitor(path):
    m = measure(load_transcripts(path))
    by_kind = {f.kind: f for f in m.kinds}
    assert m.false_flags == []  # a false flag would hide the assistant's real verdict
    assert by_kind["broke_role"].checked and by_kind["leaked"].checked
    assert not by_kind["gave_up"].checked and by_kind["gave_up"].agreement is None
    assert by_kind["leaked"].precision == 1.0
    text = render(m, path)
    assert "kinds not checked need a reader" in text and "gave_up            none" in text
    assert f"({path.name})" in text


def test_the_bench_measures_both_sets(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "(visitor-transcripts.yaml)" in out and "(visitor-transcripts-2.yaml)" in out


GOOD = """\
- id: a
  visitor: {who: a student, wants: a print}
  style: calm
  turns:
    - {role: visitor, text: hello}
    - {role: assistant, text: hi}
  failures: []
"""


@pytest.mark.parametrize(("body", "message"), [
    (GOOD + GOOD, "set.yaml:8: duplicate id 'a'"),
    (GOOD.replace("failures: []", "failures: [{kind: leaked, turn: 2}]"),
     "set.yaml:1: a: leaked at visitor turn 2, but the visitor takes 1"),
    (GOOD.replace("- {role: visitor, text: hello}\n", ""),
     "set.yaml:1: a: the visitor speaks first"),
    (GOOD.replace("kind: x", "").replace("failures: []", "failures: [{kind: shy, turn: 1}]"),
     "set.yaml:7: failures.0.kind: Input should be"),
    ("{}", "set.yaml:1: a list of labelled transcripts"),
])
def test_a_wrong_set_is_refused_with_its_line(tmp_path, body, message, capsys):
    path = tmp_path / "set.yaml"
    path.write_text(body)
    with pytest.raises(VisitorSetError, match=message.replace("(", r"\(")):
        load_transcripts(path)
    assert main(["--set", str(path)]) == 2 and message in capsys.readouterr().err
