"""The manual library: ingestion, attached scans, passage search."""

import pytest

from app.manuals import IngestError
from app.manuals.demo import FIXTURE_DIR
from app.manuals.library import RRF_K, SEARCH_CANDIDATES, TEXT_MATCH_CAP
from app.manuals.pdf import page_texts
from tests.app.manuals.pdfs import encrypted, pdf


async def test_ingestion_round_trip_stores_page_texts_and_page_bound_passages(library):
    data = (FIXTURE_DIR / "form-4-manual.pdf").read_bytes()
    stored = await library.page_texts("manuals/form-4/form-4-manual.pdf")
    assert stored == dict(enumerate(page_texts(data, "x"), start=1))
    rows = await library.db.fetch(
        "SELECT p.page, p.text FROM passages p JOIN manuals m ON m.id = p.manual_id"
        " WHERE m.title = 'Form 4 Manual'")
    assert rows and all(r["text"] in stored[r["page"]] for r in rows)


async def test_a_scanned_manual_is_attached_not_searched(library):
    [guide] = await library.attached_for("trotec-speedy-400")
    assert guide["title"] == "Trotec Speedy 400 Operator Guide" and guide["page_count"] == 3
    assert await library.attached_for("form-4") == []
    hits = await library.search("lens cleaning fluid", slug="trotec-speedy-400")
    assert all(h["title"] != "Trotec Speedy 400 Operator Guide" for h in hits)


@pytest.mark.parametrize(
    ("question", "slug", "title", "page"),
    [
        ("How do I clean the build platform?", "form-4", "Form 4 Manual", 3),
        ("Which materials are forbidden?", None, "Trotec Speedy 400 SOP", 2),
        ("How long do I wash printed parts in isopropyl alcohol?", None, "Form 4 Manual", 5),
        ("the tank film is clouded", None, "Form 4 Manual", 2),
    ],
)
async def test_search_ranks_the_obviously_relevant_passage_first(library, question, slug,
                                                                 title, page):
    [best, *_] = await library.search(question, slug=slug)
    assert (best["title"], best["page"]) == (title, page)
    assert best["url"].endswith(f"#page={page}") and best["ref"].startswith("p")


async def test_search_for_one_machine_returns_only_its_manuals(library):
    found = await library.search("laser lens exhaust resin tank", slug="trotec-speedy-400", k=10)
    assert found and {r["machine"] for r in found} == {"Trotec Speedy 400"}
    assert await library.search("resin tank", slug="no-such-machine") == []


async def test_a_corrupt_pdf_is_a_clear_error_and_the_batch_goes_on(library, tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage")
    not_pdf = tmp_path / "photo.pdf"
    not_pdf.write_bytes(b"\x89PNG....")
    good = FIXTURE_DIR / "trotec-speedy-400-sop.pdf"
    done, errors = await library.ingest_files(
        [(bad, "form-4", "Broken"), (not_pdf, "form-4", "Photo"), (good, "form-4", "Again"),
         (tmp_path / "missing.pdf", "form-4", "Missing")])
    assert [d.title for d in done] == ["Again"]
    assert errors[0].startswith("broken.pdf: ")
    assert errors[1] == "photo.pdf: not a PDF (does not start with %PDF-)"
    assert "missing.pdf" in errors[2]
    assert await library.db.fetchone("SELECT 1 FROM manuals WHERE title = 'Broken'") is None


async def test_unknown_machine_is_refused(library):
    with pytest.raises(IngestError, match="no machine with slug 'glowforge'"):
        await library.ingest((FIXTURE_DIR / "form-4-manual.pdf").read_bytes(), name="f.pdf",
                             slug="glowforge", title="x")


async def test_page_text_with_nul_bytes_is_stored_without_them_and_the_report_names_the_page(
        library):
    data = pdf("Clean page.", "Wash parts in iso\x00propyl alcohol.", "Cure \x00the parts.")
    result = await library.ingest(data, name="nul.pdf", slug="form-4", title="NUL manual")
    assert result.cleaned_pages == (2, 3)
    stored = await library.page_texts(result.key)
    assert stored == {1: "Clean page.", 2: "Wash parts in isopropyl alcohol.",
                      3: "Cure the parts."}


async def test_a_clean_pdf_reports_no_cleaned_pages(library):
    result = await library.ingest(pdf("Plain text."), name="plain.pdf", slug="form-4",
                                  title="Plain")
    assert result.cleaned_pages == ()


async def test_a_pdf_encrypted_with_an_empty_user_password_is_ingested(library):
    data = encrypted(pdf("Print restrictions only.", "Second page."), user_password="")
    result = await library.ingest(data, name="locked-print.pdf", slug="form-4", title="Open")
    assert (result.pages, result.has_text) == (2, True)
    assert await library.page_texts(result.key) == {1: "Print restrictions only.",
                                                    2: "Second page."}


async def test_a_password_protected_pdf_is_refused_and_nothing_is_written(library, tmp_path):
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(encrypted(pdf("Secret."), user_password="secret"))
    good = FIXTURE_DIR / "trotec-speedy-400-sop.pdf"
    before = await library.db.table_counts()
    with pytest.raises(IngestError, match=r"^locked\.pdf: the PDF is password-protected"):
        await library.ingest(locked.read_bytes(), name="locked.pdf", slug="form-4", title="L")
    assert await library.db.table_counts() == before
    assert not library.store.path("manuals/form-4/locked.pdf").exists()
    done, errors = await library.ingest_files([(locked, "form-4", "L"), (good, "form-4", "G")])
    assert [d.title for d in done] == ["G"]
    assert errors == ["locked.pdf: the PDF is password-protected; ingest a copy saved"
                      " without the password"]


async def _reference_search(library, question, *, slug=None, k=4):
    """Search as it was before it had a mode: both queries, fused by reciprocal rank."""
    only = "" if slug is None else (
        " AND manual_id IN (SELECT m.id FROM manuals m JOIN machines mc"
        " ON mc.id = m.machine_id WHERE mc.slug = %(slug)s)")
    params = {"q": question, "n": SEARCH_CANDIDATES, "slug": slug, "cap": TEXT_MATCH_CAP}
    details = "c.id, p.page, p.text, m.title, m.blob_key, mc.slug, mc.name AS machine"
    join = (" JOIN passages p ON p.id = c.id JOIN manuals m ON m.id = p.manual_id"
            " JOIN machines mc ON mc.id = m.machine_id")
    by_text = await library.db.fetch(
        "SELECT " + details + " FROM (SELECT id, ts_rank(tsv, websearch_to_tsquery("
        "'english', %(q)s)) AS score FROM (SELECT id, tsv FROM passages WHERE tsv @@"
        " websearch_to_tsquery('english', %(q)s)" + only + " LIMIT %(cap)s) matched"
        " ORDER BY score DESC LIMIT %(n)s) c" + join + " ORDER BY c.score DESC", params)
    [vector] = library.embedder.embed([question])
    by_vector = await library.db.fetch(
        "SELECT " + details + " FROM (SELECT id, embedding <=> %(v)s AS distance"
        " FROM passages WHERE TRUE" + only + " ORDER BY embedding <=> %(v)s"
        " LIMIT %(n)s) c" + join + " ORDER BY c.distance", {**params, "v": vector})
    scores, rows = {}, {}
    for ranked in (by_vector, by_text):
        for rank, row in enumerate(ranked):
            scores[row["id"]] = scores.get(row["id"], 0.0) + 1.0 / (RRF_K + rank + 1)
            rows[row["id"]] = row
    best = sorted(scores, key=lambda i: -scores[i])[:k]
    return [library._result(rows[i]) for i in best]


@pytest.mark.parametrize(("question", "slug", "k"), [
    ("How do I clean the build platform?", None, 4),
    ("Which materials are forbidden?", "trotec-speedy-400", 4),
    ("resin tank film scratches spatula", None, 10),
    ("wifi password", None, 3),  # no full-text match: the vector half alone
    ("laser", "form-4", 4),
])
async def test_fused_search_is_what_it_was_before_search_had_a_mode(library, question, slug, k):
    expected = await _reference_search(library, question, slug=slug, k=k)
    assert await library.search(question, slug=slug, k=k) == expected
    assert await library.search(question, slug=slug, k=k, mode="fused") == expected
    scored = await library.scored(question, slug=slug, k=k)
    assert [r for _, r in scored] == expected
    assert [s for s, _ in scored] == sorted((s for s, _ in scored), reverse=True)


async def test_each_half_of_search_alone_ranks_by_its_own_score(library):
    question = "stir the resin in the tank"
    text = await library.scored(question, k=10, mode="text")
    vector = await library.scored(question, k=10, mode="vector")
    assert text and vector
    for ranked in (text, vector):
        assert [s for s, _ in ranked] == sorted((s for s, _ in ranked), reverse=True)
        assert ranked[0][1]["page"] == 2 and ranked[0][1]["title"] == "Form 4 Manual"
    # Full text needs every word: only the tank page has "stir", "resin" and "tank".
    assert [(r["title"], r["page"]) for _, r in text] == [("Form 4 Manual", 2)]
    # The vector half ranks every passage (10 here), by cosine similarity.
    assert len(vector) == 10 and all(-1.0 <= s <= 1.0 + 1e-6 for s, _ in vector)
    assert await library.search("no such words anywhere xyzzy", mode="text") == []
    assert len(await library.search("no such words anywhere xyzzy", mode="vector")) == 4
    only = await library.search("resin laser tank lens", slug="form-4", k=10, mode="vector")
    assert {r["machine"] for r in only} == {"Form 4"}
