import pytest

from evals.checks import _parse
from evals.checks._parse import ParserError, covering, head_of, parse, pipeline_digest


def test_a_sentence_is_parsed_once():
    assert parse("We don't have a Glowforge.") is parse("We don't have a Glowforge.")


def test_covering_and_head_of_find_the_phrase_head():
    doc = parse("Use the Bambu Lab X1 Carbon today.")
    tokens = covering(doc, 8, 26)
    assert [t.text for t in tokens] == ["Bambu", "Lab", "X1", "Carbon"]
    assert head_of(tokens).text == "Carbon"
    assert covering(doc, 3, 3) == [] and head_of([]) is None


def test_a_changed_pipeline_is_refused(monkeypatch):
    monkeypatch.setattr(_parse, "PIPELINE_SHA256", "0" * 64)
    with pytest.raises(ParserError, match="not the pinned 0000"):
        _parse.nlp.__wrapped__()


def test_a_missing_pipeline_is_named(monkeypatch):
    monkeypatch.setattr(_parse, "PIPELINE", "no_such_pipeline_pkg")
    with pytest.raises(ParserError, match="no_such_pipeline_pkg is not installed"):
        _parse.nlp.__wrapped__()


def test_the_digest_covers_names_and_contents(tmp_path):
    (tmp_path / "a").write_text("x")
    first = pipeline_digest(tmp_path)
    (tmp_path / "a").write_text("y")
    second = pipeline_digest(tmp_path)
    (tmp_path / "a").rename(tmp_path / "b")
    assert len({first, second, pipeline_digest(tmp_path)}) == 3
