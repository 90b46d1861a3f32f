"""PDFs made in the test: plain pages, pages whose text holds control characters, encrypted."""

from __future__ import annotations

import io


def pdf(*pages: str) -> bytes:
    """One page per string, in Helvetica; fpdf2 writes control characters through as they are."""
    from fpdf import FPDF  # 0.15 s: imported by the workers that make a PDF, not in collection

    doc = FPDF()
    doc.set_font("helvetica", size=12)
    for text in pages:
        doc.add_page()
        doc.multi_cell(0, 10, text)
    return bytes(doc.output())


def encrypted(data: bytes, *, user_password: str, algorithm: str = "AES-256") -> bytes:
    """`data` encrypted; an empty user password opens it, only the owner's rights are locked."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
