import httpx
import pytest

from app.manuals.citations import (
    DocumentEvidence,
    check_citations,
    extract_citations,
    gather_evidence,
    resolve_links,
)

BASE = "http://127.0.0.1:9/manuals"
FORM4 = f"{BASE}/form-4/form-4-manual.pdf"
GUIDE = f"{BASE}/trotec-speedy-400/trotec-speedy-400-operator-guide.pdf"
PAGE3 = ("Form 4 Manual: Build platform To remove the build platform, lift the cover and pull "
         "the platform latch. Wipe the platform with isopropyl alcohol.")
SEARCH = [{"ref": "p7", "title": "Form 4 Manual", "page": 3, "url": f"{FORM4}#page=3",
           "text": PAGE3, "machine": "Form 4"}]
ATTACHED = [{"ref": "m3", "title": "Trotec Speedy 400 Operator Guide", "address": GUIDE,
             "key": "k", "page_count": 3}]
TITLES = {"Form 4 Manual", "Trotec Speedy 400 SOP", "Trotec Speedy 400 Operator Guide"}
GOOD_PDF = DocumentEvidence(200, "application/pdf", True, 6, {3: PAGE3})
GOOD_GUIDE = DocumentEvidence(200, "application/pdf", True, 3, {})
GOOD_ANSWER = ("Wipe the build platform with isopropyl alcohol after removing it "
               "[Form 4 Manual, p. 3](#cite-p7).")


def _check(answer, evidence=None):
    cites = extract_citations(answer, SEARCH, ATTACHED)
    ev = evidence if evidence is not None else {FORM4: GOOD_PDF, GUIDE: GOOD_GUIDE}
    return check_citations(cites, ev, TITLES)


def test_a_searched_citation_that_resolves_passes():
    passed, reason = _check(GOOD_ANSWER)
    assert passed, reason


def test_a_raw_address_from_the_search_passes_too():
    passed, reason = _check(f"Wipe the build platform with isopropyl alcohol "
                            f"[Form 4 Manual, p. 3]({FORM4}#page=3).")
    assert passed, reason


@pytest.mark.parametrize(
    ("answer", "evidence", "reason"),
    [
        ("Wipe the platform [Form 4 Manual, p. 9](#cite-p99).", None,
         "came from no search result or attached manual"),
        (f"Wipe the platform [Form 4 Manual, p. 4]({FORM4}#page=4).", None,
         "came from no search result"),
        (GOOD_ANSWER, {FORM4: DocumentEvidence(404, "text/plain", False, None)}, "answered 404"),
        (GOOD_ANSWER, {FORM4: DocumentEvidence(200, "text/html", False, None)}, "is not a PDF"),
        (GOOD_ANSWER, {FORM4: DocumentEvidence(200, "application/pdf", True, 2, {3: PAGE3})},
         "page 3 is not in"),
        ("Resin cures fast under sunlight [Form 4 Manual, p. 3](#cite-p7).", None,
         "shares no words with page 3"),
        ("Wipe the build platform with isopropyl alcohol [Trotec Speedy 400 SOP, p. 3](#cite-p7).",
         None, "is labelled “Trotec Speedy 400 SOP, p. 3” but opens “Form 4 Manual”"),
        ("The Form 4 needs gloves.", None, "the answer has no manual citation"),
    ],
)
def test_each_failure_mode_fails_with_a_reason_quoting_the_citation(answer, evidence, reason):
    passed, why = _check(answer, evidence)
    assert not passed
    assert reason in why


def test_attached_manual_citation_in_and_out_of_range():
    inside = "Clean the lens weekly [Trotec Speedy 400 Operator Guide, p. 2](#cite-m3-2)."
    outside = "Clean the lens weekly [Trotec Speedy 400 Operator Guide, p. 7](#cite-m3-7)."
    assert _check(inside)[0]
    passed, why = _check(outside)
    assert not passed and "page 7 is not in" in why


def test_plain_title_and_page_citation_of_an_attached_manual():
    cites = extract_citations("See the Trotec Speedy 400 Operator Guide, p. 2 for the lens.",
                              SEARCH, ATTACHED)
    assert [(c.source, c.page, c.url) for c in cites] == [("attached", 2, f"{GUIDE}#page=2")]
    assert check_citations(cites, {GUIDE: GOOD_GUIDE}, TITLES)[0]


def test_ordinary_links_are_not_citations():
    assert extract_citations("Use the [Form 4](/tools/form-4).", SEARCH, ATTACHED) == []


def test_resolve_links_swaps_cite_refs_for_addresses():
    assert resolve_links(GOOD_ANSWER, SEARCH, ATTACHED).endswith(f"({FORM4}#page=3).")
    attached = resolve_links("[Guide, p. 2](#cite-m3-2)", SEARCH, ATTACHED)
    assert attached == f"[Guide, p. 2]({GUIDE}#page=2)"
    assert resolve_links("[x](#cite-p99)", SEARCH, ATTACHED) == "[x](#cite-p99)"


async def test_evidence_is_gathered_over_real_http(library):
    [hit, *_] = await library.search("clean the build platform", slug="form-4")
    answer = f"Wipe the build platform with isopropyl alcohol [Form 4 Manual, p. {hit['page']}]" \
             f"(#cite-{hit['ref']})."
    cites = extract_citations(answer, [hit], [])
    doc = cites[0].document
    key = library.store.key_for(doc)
    async with httpx.AsyncClient() as client:
        evidence = await gather_evidence(cites, {doc: await library.page_texts(key)}, client,
                                         may_fetch=library.store.serves)
        missing = await gather_evidence(
            extract_citations(f"[Form 4 Manual, p. 1]({doc.replace('form-4-manual', 'gone')}"
                              "#page=1)", [], []), {}, client, may_fetch=library.store.serves)
    assert evidence[doc].status == 200 and evidence[doc].page_count == 6
    assert check_citations(cites, evidence, TITLES) == (True, "1 citation(s) resolve")
    assert next(iter(missing.values())).status == 404


async def test_evidence_is_fetched_only_where_it_may_be():
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    from app.serving import serve_in_thread

    asked = []

    async def anything(request):
        asked.append(request.url.path)
        return Response(b"%PDF-1.4 secret", media_type="application/pdf")

    app = Starlette(routes=[Route("/{p:path}", anything)])
    with serve_in_thread(app) as other:
        cites = extract_citations(f"See [Form 4 Manual, p. 1]({other}/internal.pdf#page=1).",
                                  [], [])
        async with httpx.AsyncClient() as client:
            evidence = await gather_evidence(cites, {}, client,
                                             may_fetch=lambda url: url.startswith(BASE))
    [got] = evidence.values()
    assert asked == [] and got.status == 0 and "not fetched" in (got.error or "")
    assert check_citations(cites, evidence, TITLES)[0] is False
