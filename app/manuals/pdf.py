"""Reading PDFs with pypdf: page count and each page's text."""

from __future__ import annotations

import io
import re

PDF_MAGIC = b"%PDF-"


class PdfError(ValueError):
    """A file that cannot be read as a PDF; the message names the file."""


def normalise(text: str) -> str:
    """Whitespace folded to single spaces (how page texts are stored and compared)."""
    return re.sub(r"\s+", " ", text).strip()


def page_texts(data: bytes, name: str) -> list[str]:
    """The text of each page (index 0 is page 1); a page with no text layer gives ''."""
    from pypdf import PdfReader  # slow to import: only when a PDF is read
    from pypdf.errors import PdfReadError, PyPdfError

    if not data.startswith(PDF_MAGIC):
        raise PdfError(f"{name}: not a PDF (does not start with %PDF-)")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        texts = [normalise(page.extract_text() or "") for page in reader.pages]
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise PdfError(f"{name}: cannot read the PDF: {exc}") from exc
    if not texts:
        raise PdfError(f"{name}: the PDF has no pages")
    return texts


def page_count(data: bytes) -> int | None:
    """Pages in a PDF, from the file itself; None when it cannot be read."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        return len(PdfReader(io.BytesIO(data), strict=False).pages)
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError):
        return None
