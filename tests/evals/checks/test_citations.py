from app.manuals.citations import DocumentEvidence
from tests.evals.checks.helpers import call, check

URL = "http://127.0.0.1:9/blobs/manuals/form-4/form-4-manual.pdf"
PAGE = "Form 4 Manual: Post-processing Wash printed parts in Form Wash with isopropyl alcohol."
SEARCH = [call("search_manual", {"question": "wash"}, {"passages": [
    {"ref": "p5", "title": "Form 4 Manual", "page": 5, "url": f"{URL}#page=5", "text": PAGE}]})]
ANSWER = "Wash printed parts in isopropyl alcohol [Form 4 Manual, p. 5](#cite-p5)."


def test_cites_page_reads_a_cite_ref_as_the_searched_address():
    assert check("cites_page", ANSWER, calls=SEARCH)[0]
    assert check("cites_page", ANSWER, calls=SEARCH, value="5")[0]
    assert check("cites_page", ANSWER, calls=SEARCH, value="form-4-manual.pdf#page=5")[0]
    passed, reason = check("cites_page", ANSWER, calls=SEARCH, value="3")
    assert not passed and "not 3" in reason
    assert not check("cites_page", "Wash them.", calls=SEARCH)[0]


def test_citations_resolve_uses_the_gathered_evidence():
    good = {URL: DocumentEvidence(200, "application/pdf", True, 6, {5: PAGE})}
    assert check("citations_resolve", ANSWER, calls=SEARCH, evidence=good)[0]
    gone = {URL: DocumentEvidence(404, "text/plain", False, None)}
    passed, reason = check("citations_resolve", ANSWER, calls=SEARCH, evidence=gone)
    assert not passed and "answered 404" in reason
