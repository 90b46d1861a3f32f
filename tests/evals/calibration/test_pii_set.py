import pytest

from evals.calibration.pii_set import PII_BLIND, PiiSetError, load_turns, spans


def test_the_labelled_set_has_every_kind_and_its_labels_are_in_their_turns():
    turns = load_turns()
    assert len(turns) >= 100
    assert {p.kind for t in turns for p in t.pii} == {"name", "phone", "email", "address"}
    assert {"machine", "room", "ticket", "date", "time", "part", "measure"} <= {
        d.kind for t in turns for d in t.keep}
    assert all(spans(t.text, t.pii + t.keep) or not (t.pii or t.keep) for t in turns)


def test_the_blind_set_says_each_turns_language_and_where_it_stands():
    turns = load_turns(PII_BLIND)
    assert len(turns) >= 60 and len({t.lang for t in turns}) >= 5
    assert {t.where for t in turns} == {"visitor", "tool_args"}
    assert {p.kind for t in turns for p in t.pii} == {
        "name", "phone", "email", "address", "student_id"}
    assert {t.lang for t in load_turns()} == {"en"} and {t.where for t in load_turns()} == {
        "visitor"}


def test_a_label_every_place_it_occurs():
    (turn,) = [t for t in load_turns() if t.id == "name-self-9"]
    assert [(s.start, s.text) for s in spans(turn.text, turn.pii)] == [
        (8, "Dev"), (13, "Dev"), (13, "Dev Patel")]


@pytest.mark.parametrize("body, message", [
    ("- id: a\n  text: hello\n  pii: [{kind: name, text: Bob}]\n",
     "pii.yaml:1: a: 'Bob' is not in the turn's text"),
    ("- id: a\n  text: hi Bob\n- id: a\n  text: hi Ann\n", "pii.yaml:3: duplicate id 'a'"),
    ("- id: a\n  text: hi Bob\n  pii: [{kind: nickname, text: Bob}]\n", "pii.yaml:3: pii.0.kind"),
    ("{}\n", "pii.yaml:1: a list of labelled turns"),
    ("- id: a\n  where: email\n  text: hi Bob\n", "pii.yaml:2: where"),
    ("- id: a\n  lang: French\n  text: hi Bob\n", "pii.yaml:2: lang"),
])
def test_a_wrong_set_is_refused_with_its_line(tmp_path, body, message):
    path = tmp_path / "pii.yaml"
    path.write_text(body)
    with pytest.raises(PiiSetError, match=message.replace(".", r"\.")):
        load_turns(path)
