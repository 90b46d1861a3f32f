"""The run as one HTML page: escaped, and a failed check leads to what it is about."""

import pytest

from evals.report.html import render_run
from tests.evals.report.helpers import SENTENCE, record


def test_model_output_is_escaped_and_failures_come_first():
    page = render_run(record())
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert page.index('id="FAIL"') < page.index('id="PASS"')


def test_a_failed_check_links_to_the_sentence_or_tool_call_it_is_about():
    page = render_run(record())
    assert f'<mark id="no-glowforge-r1-a1-q0">{SENTENCE}</mark>' in page
    assert 'href="#no-glowforge-r1-a1-q0"' in page
    assert 'id="no-glowforge-r1-a1-call-0"' in page and 'href="#no-glowforge-r1-a1-call-0"' in page


@pytest.mark.slow
@pytest.mark.parametrize("width", [390, 1440])
async def test_in_the_browser_a_failed_check_highlights_its_sentence(tmp_path, width):
    from tests.browser import chromium, screenshot

    page_file = tmp_path / "run.html"
    page_file.write_text(render_run(record()))
    async with chromium() as browser:
        page = await browser.new_page(viewport={"width": width, "height": 800})
        await page.goto(page_file.as_uri())
        await page.click("li.check.failed a >> nth=0")
        target = await page.evaluate("document.querySelector(':target').textContent")
        fits = await page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        await screenshot(page, f"report-{width}")
    assert target == SENTENCE and fits


def test_marks_never_overlap_or_repeat_an_anchor():
    from evals.report.html import _marked

    placed: set[str] = set()
    once = _marked("hello world foo", [("world", "a0"), ("hello world", "a1")], placed)
    assert once.count("world") == 1 and once.count("<mark") == 1
    again = _marked("world again", [("world", "a0")], placed)
    assert "<mark" not in again  # a0 is already on the page


def test_only_a_web_address_is_a_link():
    from app.manuals.citations import DocumentEvidence

    run = record()
    evidence = {url: DocumentEvidence(status=200, content_type="application/pdf", is_pdf=True,
                                      page_count=1)
                for url in ("javascript:alert(1)//x.pdf", "https://lab.example/m.pdf")}
    attempt = run.cases[0].attempts[0]
    attempt.transcript = attempt.transcript.model_copy(update={"evidence": evidence})
    page = render_run(run)
    assert "<code>javascript:alert(1)//x.pdf</code>" in page
    assert 'href="javascript' not in page
    assert '<a href="https://lab.example/m.pdf">https://lab.example/m.pdf</a>' in page
