"""The labelled retrieval set: the shipped one loads and matches the PDFs; a malformed one
names file:line."""

import io

import pytest

from app.manuals.demo import DEMO_MANUALS, FIXTURE_DIR
from evals.calibration.retrieval import RetrievalSetError, load_set


def _pdfs():
    """Each fixture manual's pages, read with pypdf here (not through the loader)."""
    from pypdf import PdfReader

    out = {}
    for file, _, title in DEMO_MANUALS:
        reader = PdfReader(io.BytesIO((FIXTURE_DIR / file).read_bytes()))
        out[title] = [(page.extract_text() or "").strip() for page in reader.pages]
    return out


def test_the_shipped_set_loads_and_every_expected_page_is_in_its_pdf():
    labelled = load_set()
    pdfs = _pdfs()
    kinds = [q.kind for q in labelled]
    assert len(labelled) >= 60
    assert kinds.count("attached") >= 5 and kinds.count("none") >= 5
    assert len({q.item.id for q in labelled}) == len(labelled)
    for q in labelled:
        for manual, page in q.expected:
            assert 1 <= page <= len(pdfs[manual]), q.where
        if q.kind == "attached":  # a manual whose pages have no text
            assert not any(pdfs[q.item.answer.manual]), q.where
            assert q.slug == "trotec-speedy-400"
        if q.kind == "searchable":
            assert all(pdfs[m][p - 1] for m, p in q.expected), q.where
        if q.kind == "none":
            assert q.expected == frozenset() and q.slug is None
    assert labelled[0].where.startswith("manuals.yaml:")


def _errors(tmp_path, text):
    path = tmp_path / "set.yaml"
    path.write_text(text)
    with pytest.raises(RetrievalSetError) as raised:
        load_set(path)
    return raised.value.errors


GOOD = "- id: ok\n  question: how do I focus the laser\n" \
       "  answer: {manual: Trotec Speedy 400 SOP, pages: [3]}\n"


@pytest.mark.parametrize(("text", "expected"), [
    (GOOD + "- id: extra\n  question: a question\n  answer: none\n  colour: red\n",
     "set.yaml:7: colour: Extra inputs are not permitted"),
    (GOOD + "- id: who\n  question: a question\n"
            "  answer: {manual: Glowforge Manual, pages: [1]}\n",
     "set.yaml:6: answer.manual: unknown manual 'Glowforge Manual'; the fixture manuals are"
     " 'Form 4 Manual', 'Trotec Speedy 400 SOP', 'Trotec Speedy 400 Operator Guide'"),
    (GOOD + "- id: far\n  question: a question\n"
            "  answer:\n    manual: Form 4 Manual\n    pages: [2, 7, 9]\n",
     "set.yaml:8: answer.pages: Form 4 Manual has 6 pages, not page 7, 9"),
    (GOOD + "- id: zero\n  question: a question\n"
            "  answer:\n    manual: Form 4 Manual\n    pages: [0]\n",
     "set.yaml:8: answer.pages.0: Input should be greater than 0"),
    (GOOD + "- id: blank\n  question: a question\n  answer:\n",
     "set.yaml:6: answer: write `answer: none` for a question no manual answers"),
    (GOOD + "- id: nothing\n  question: a question\n",
     "set.yaml:4: answer: Field required"),
    (GOOD + GOOD, "set.yaml:4: duplicate id 'ok' (first at set.yaml:1)"),
    ("id: ok\n", "set.yaml:1: a retrieval set is a list of questions"),
    (GOOD + "- id: bad\n  question: [unclosed\n", "set.yaml:6: YAML: "),
])
def test_a_malformed_set_names_file_and_line(tmp_path, text, expected):
    errors = _errors(tmp_path, text)
    assert errors[0].startswith(expected), errors


def test_every_error_is_reported_at_once(tmp_path):
    errors = _errors(tmp_path, "- id: a\n  question: q?\n  answer: {manual: X, pages: [1]}\n"
                               "- id: b\n  question: q?\n  answer: none\n  extra: 1\n")
    assert [e.split(":")[1] for e in errors] == ["3", "7"]
