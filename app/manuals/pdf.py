"""Reading PDFs with pypdf: page count and each page's text."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

# pypdf is imported where a PDF is read, not here: it takes 0.07 s to import (measured with
# -X importtime), and most processes that import this module (for PDF_MAGIC, an eval run's
# start-up) read no PDF.

PDF_MAGIC = b"%PDF-"
# C0 control characters that are not whitespace. PostgreSQL text cannot hold NUL at all, and
# the rest are extraction debris (a CID font read byte by byte gives "\x00H\x00e..."), so they
# are deleted, not turned into spaces. Whitespace controls (tab, form feed...) fold to spaces.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b]")


class PdfError(ValueError):
    """A file that cannot be read as a PDF; the message names the file."""


@dataclass(frozen=True)
class PdfPages:
    texts: list[str]  # index 0 is page 1; a page with no text layer gives ''
    cleaned: tuple[int, ...]  # pages (from 1) whose text had NUL or other control characters


def normalise(text: str) -> str:
    """Whitespace folded to single spaces (how page texts are stored and compared)."""
    return re.sub(r"\s+", " ", text).strip()


def read_pages(data: bytes, name: str) -> PdfPages:
    """Each page's text, normalised and with control characters removed."""
    if not data.startswith(PDF_MAGIC):
        raise PdfError(f"{name}: not a PDF (does not start with %PDF-)")
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        # Many manuals are encrypted with an empty user password only to restrict printing.
        # pypdf tries that password when opening, though its docs say it does not: ask here.
        locked = reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED
        raw = [] if locked else [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise PdfError(f"{name}: cannot read the PDF: {exc}") from exc
    if locked:
        raise PdfError(f"{name}: the PDF is password-protected; ingest a copy saved without"
                       " the password")
    if not raw:
        raise PdfError(f"{name}: the PDF has no pages")
    return PdfPages(texts=[normalise(_CONTROL.sub("", text)) for text in raw],
                    cleaned=tuple(i + 1 for i, text in enumerate(raw) if _CONTROL.search(text)))


def page_texts(data: bytes, name: str) -> list[str]:
    """The text of each page (index 0 is page 1); a page with no text layer gives ''."""
    return read_pages(data, name).texts


def page_count(data: bytes) -> int | None:
    """Pages in a PDF, from the file itself; None when it cannot be read."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        return len(PdfReader(io.BytesIO(data), strict=False).pages)
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError):
        return None
