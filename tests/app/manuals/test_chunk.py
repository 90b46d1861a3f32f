"""Passages: page-bound, overlapping by a sentence."""

from app.manuals.chunk import passages


def test_passages_never_exceed_the_page_and_overlap_by_a_sentence():
    text = " ".join(f"Sentence number {i} is about the resin tank." for i in range(40))
    parts = passages(text, target=200)
    assert len(parts) > 3 and all(p in text for p in parts)
    assert parts[0].rsplit(". ", 1)[-1] in parts[1]
