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


def test_loading_the_pipeline_loads_no_other_packages_spacy_factories(monkeypatch):
    """spaCy imports every installed package's pipeline factories when it builds a pipeline
    (presidio's among them: 0.3 s); ours uses spaCy's own alone. The switch is put back."""
    from spacy import util

    factories = util.registry._entry_point_factories
    loaded = []
    monkeypatch.setattr(factories, "get_entry_points", lambda: loaded.append(1) or {})
    nlp = _parse.nlp.__wrapped__()
    assert loaded == [] and factories.entry_points
    assert nlp.pipe_names == _parse.nlp().pipe_names
    assert "ner" not in nlp.pipe_names and "parser" in nlp.pipe_names

