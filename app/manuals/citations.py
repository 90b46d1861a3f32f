"""Manual citations: find them in an answer, gather evidence over HTTP, check them (pure).

A citation is a markdown link whose target is `#cite-<ref>` (a searched passage),
`#cite-<ref>-<page>` (an attached manual's page), or a stored PDF address with `#page=N`; or a
plain "(<title>, p. N)" naming an attached manual. The check passes only when every one came
from a search result or an attached manual, answers 200 application/pdf starting with %PDF-,
opens a page the PDF has, cites words on that page (searched passages), and is labelled with
the document (and, where the label gives one, the page) it opens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.manuals.pdf import PDF_MAGIC, page_count

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CITE = re.compile(r"^#cite-([a-z]\d+)(?:-(\d+))?$")
_PAGE = re.compile(r"#page=(\d+)$")
_WORD = re.compile(r"[a-z0-9]+")
GENERIC_TITLE_WORDS = {"manual", "guide", "operator", "operators", "sop", "user", "the", "and",
                       "handbook", "standard", "operating", "procedure", "of", "for"}
STOPWORDS = {"the", "and", "for", "with", "that", "this", "from", "your", "you", "are", "then",
             "into", "when", "have", "will", "before", "after", "page", "manual", "guide",
             "each", "them", "they", "what", "which", "there", "their", "about", "should"}
MIN_SHARED_WORDS = 2
_LABEL_PAGE = re.compile(r"\bp(?:age|p?\.)?\s*(\d+)\b", re.IGNORECASE)


@dataclass
class Citation:
    raw: str
    label: str
    url: str | None  # the PDF address with #page=N, once resolved
    page: int | None
    source: str | None  # "search" | "attached" | None (came from nowhere)
    title: str | None = None
    sentence: str = ""
    passage: str | None = None

    @property
    def document(self) -> str | None:
        return self.url.split("#", 1)[0] if self.url else None


@dataclass
class DocumentEvidence:
    status: int
    content_type: str
    is_pdf: bool
    page_count: int | None
    page_texts: dict[int, str] = field(default_factory=dict)
    error: str | None = None


# A full stop after one of these does not end the sentence ("e.g. spare gloves").
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|p|pp|approx|etc|vs|dr|no|fig|ca)|\b[A-Za-z])$",
                           re.IGNORECASE)
_STOP = re.compile(r"[.!?](?=\s)|\n")


def _sentence_around(text: str, start: int, end: int) -> str:
    stops = [m.start() for m in _STOP.finditer(text)
             if text[m.start()] == "\n" or not _ABBREVIATION.search(text[:m.start()])]
    left = max((i for i in stops if i < start), default=-1)
    right = min((i for i in stops if i >= end), default=len(text))
    return text[left + 1:right].strip()


def searched_passages(calls: Iterable[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Every passage search_manual returned, from a turn's (tool name, result) pairs: what a
    `#cite-<ref>` may point at."""
    return [
        p
        for name, result in calls
        if name == "search_manual" and isinstance(result, dict)
        for p in result.get("passages", [])
    ]


def extract_citations(
    answer: str, search_results: list[dict[str, Any]], attached: list[dict[str, Any]]
) -> list[Citation]:
    """Every manual citation in an answer, resolved against this turn's sources."""
    by_ref = {r["ref"]: r for r in search_results}
    by_url = {r["url"]: r for r in search_results}
    attached_by_ref = {m["ref"]: m for m in attached}
    attached_by_address = {m["address"]: m for m in attached}
    found: list[Citation] = []
    for match in _LINK.finditer(answer):
        label, target = match.group(1), match.group(2)
        sentence = _sentence_around(answer, match.start(), match.end())
        cite = _CITE.match(target)
        if cite:
            ref, page = cite.group(1), cite.group(2)
            if page is None and ref in by_ref:
                r = by_ref[ref]
                found.append(Citation(match.group(0), label, r["url"], r["page"], "search",
                                      r["title"], sentence, r["text"]))
            elif page is not None and ref in attached_by_ref:
                m = attached_by_ref[ref]
                found.append(Citation(match.group(0), label, f"{m['address']}#page={page}",
                                      int(page), "attached", m["title"], sentence))
            else:
                found.append(Citation(match.group(0), label, None,
                                      int(page) if page else None, None, None, sentence))
            continue
        page_match = _PAGE.search(target)
        base = target.split("#", 1)[0]
        if not (page_match or base.lower().endswith(".pdf")):
            continue  # an ordinary link (a tool page, a website): not a manual citation
        page = int(page_match.group(1)) if page_match else None
        if target in by_url:
            r = by_url[target]
            found.append(Citation(match.group(0), label, target, r["page"], "search", r["title"],
                                  sentence, r["text"]))
        elif base in attached_by_address and page is not None:
            m = attached_by_address[base]
            found.append(Citation(match.group(0), label, target, page, "attached", m["title"],
                                  sentence))
        else:
            found.append(Citation(match.group(0), label, target, page, None, None, sentence))
    for m in attached:
        pattern = re.compile(re.escape(m["title"]) + r",?\s+p(?:age|\.)?\s*(\d+)", re.IGNORECASE)
        for hit in pattern.finditer(answer):
            if any(hit.group(0) in c.label for c in found):
                continue  # already counted as a link's label
            page = int(hit.group(1))
            found.append(Citation(hit.group(0), hit.group(0), f"{m['address']}#page={page}", page,
                                  "attached", m["title"], _sentence_around(answer, hit.start(),
                                                                           hit.end())))
    return found


def resolve_links(answer: str, search_results: list[dict[str, Any]],
                  attached: list[dict[str, Any]]) -> str:
    """The answer with every #cite-… target replaced by the address it stands for."""
    def swap(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        for c in extract_citations(match.group(0), search_results, attached):
            if c.url and target.startswith("#cite-"):
                return f"[{label}]({c.url})"
        return match.group(0)

    return _LINK.sub(swap, answer)


async def gather_evidence(
    citations: list[Citation], page_texts: dict[str, dict[int, str]],
    client: httpx.AsyncClient, *, may_fetch: Callable[[str], bool],
) -> dict[str, DocumentEvidence]:
    """GET each cited document once: status, type, magic, page count from the PDF itself.

    `page_texts` maps a document address to its stored page texts (from the database). Only
    addresses `may_fetch` allows are requested (an answer is data: a link in it must not make
    the checker reach any address it names); any other is evidence of nothing.
    """
    evidence: dict[str, DocumentEvidence] = {}
    for doc in {c.document for c in citations if c.document}:
        if not may_fetch(doc):
            evidence[doc] = DocumentEvidence(0, "", False, None, error=(
                "not fetched: not an address of the manual store"))
            continue
        try:
            resp = await client.get(doc)
        except httpx.HTTPError as exc:
            evidence[doc] = DocumentEvidence(0, "", False, None, error=str(exc))
            continue
        body = resp.content
        is_pdf = body.startswith(PDF_MAGIC)
        evidence[doc] = DocumentEvidence(
            status=resp.status_code,
            content_type=resp.headers.get("content-type", "").split(";")[0].strip(),
            is_pdf=is_pdf,
            page_count=page_count(body) if is_pdf else None,
            page_texts=page_texts.get(doc, {}),
        )
    return evidence


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3 and w not in STOPWORDS}


def _title_score(label: str, title: str) -> int:
    return len(_words_all(label) & _words_all(title))


def _words_all(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _label_names(label: str, title: str, titles: set[str]) -> bool:
    distinctive = _words_all(title) - GENERIC_TITLE_WORDS
    if not distinctive <= _words_all(label):
        return False
    # A label that matches another document's title better names that document instead.
    mine = _title_score(label, title)
    return all(_title_score(label, other) <= mine for other in titles if other != title)


def check_citations(
    citations: list[Citation], evidence: dict[str, DocumentEvidence], titles: set[str]
) -> tuple[bool, str]:
    """Pure: (passed, reason quoting the first offending citation)."""
    if not citations:
        return False, "the answer has no manual citation"
    for c in citations:
        quoted = f"“{c.raw}”"
        if c.source is None or c.url is None:
            return False, f"{quoted} came from no search result or attached manual"
        ev = evidence.get(c.document or "")
        if ev is None:
            return False, f"{quoted}: no evidence was gathered for {c.document}"
        if ev.status != 200:
            return False, f"{quoted}: {c.document} answered {ev.status or ev.error}"
        if ev.content_type != "application/pdf" or not ev.is_pdf:
            return False, f"{quoted}: {c.document} is not a PDF ({ev.content_type or 'no type'})"
        if c.page is None or ev.page_count is None or not 1 <= c.page <= ev.page_count:
            return False, (f"{quoted}: page {c.page} is not in {c.document}"
                           f" ({ev.page_count} pages)")
        if c.source == "search":
            page_text = ev.page_texts.get(c.page, "")
            shared = _words(c.sentence.replace(c.raw, " ")) & _words(page_text)
            if len(shared) < MIN_SHARED_WORDS:
                return False, (f"{quoted}: the sentence citing it shares no words with page"
                               f" {c.page} of {c.title}: “{c.sentence}”")
        if c.title and not _label_names(c.label, c.title, titles):
            return False, f"{quoted} is labelled “{c.label}” but opens “{c.title}”"
        labelled_page = _LABEL_PAGE.search(c.label)
        if labelled_page and int(labelled_page.group(1)) != c.page:
            return False, (f"{quoted} is labelled page {labelled_page.group(1)} but opens"
                           f" page {c.page}")
    return True, f"{len(citations)} citation(s) resolve"
