"""Reading PDFs: each page's text, control characters removed, encrypted files."""

import pytest

from app.manuals.demo import FIXTURE_DIR
from app.manuals.pdf import PdfError, normalise, page_texts, read_pages
from evals.fixtures.manuals.make_manuals import MANUALS
from tests.app.manuals.pdfs import encrypted, pdf


def test_nul_and_other_control_characters_are_removed_and_their_pages_named():
    pages = read_pages(pdf("Clean page.", "Re\x00sin\x00 tank", "Bell\x07 and\x1b escape",
                           "Form\x0cfeed and\ttab"), "n.pdf")
    assert pages.texts == ["Clean page.", "Resin tank", "Bell and escape", "Form feed and tab"]
    assert pages.cleaned == (2, 3)


def test_a_pdf_without_control_characters_names_no_page():
    assert read_pages(pdf("One.", "Two."), "x.pdf").cleaned == ()


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_a_pdf_encrypted_with_an_empty_user_password_is_read(algorithm):
    data = encrypted(pdf("Resin tank care."), user_password="", algorithm=algorithm)
    assert read_pages(data, "e.pdf").texts == ["Resin tank care."]


def test_a_pdf_with_a_user_password_is_refused_as_password_protected():
    data = encrypted(pdf("Secret."), user_password="secret")
    with pytest.raises(PdfError, match=r"^locked\.pdf: the PDF is password-protected"):
        read_pages(data, "locked.pdf")


def test_page_texts_of_garbage_is_a_pdf_error():
    with pytest.raises(PdfError, match="x.pdf: cannot read the PDF"):
        page_texts(b"%PDF-1.4 nothing else", "x.pdf")


def test_fixture_pdfs_hold_exactly_the_text_their_script_writes():
    assert MANUALS, "the fixture script lists no manual: the loop below would check nothing"
    for name, (title, _, pages), has_text in MANUALS:
        texts = page_texts((FIXTURE_DIR / name).read_bytes(), name)
        assert len(texts) == len(pages)
        for text, (heading, body, *hidden) in zip(texts, pages, strict=True):
            written = " ".join([f"{title}: {heading} {body}", *(h for h in hidden if h)])
            assert text == (normalise(written) if has_text else "")
