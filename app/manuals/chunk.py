"""Passages: chunks of one page's text, at sentence boundaries; never across pages."""

from __future__ import annotations

import re

TARGET_CHARS = 600
OVERLAP_SENTENCES = 1

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def passages(page_text: str, target: int = TARGET_CHARS) -> list[str]:
    """Split a page into passages of about `target` characters, overlapping by a sentence."""
    sentences = [s for s in _SENTENCE.split(page_text.strip()) if s]
    out: list[str] = []
    current: list[str] = []
    for sentence in sentences:
        if current and len(" ".join(current)) + len(sentence) + 1 > target:
            out.append(" ".join(current))
            current = current[-OVERLAP_SENTENCES:] if OVERLAP_SENTENCES else []
        current.append(sentence)
    if current:
        tail = " ".join(current)
        if not out or tail not in out[-1]:
            out.append(tail)
    return out
