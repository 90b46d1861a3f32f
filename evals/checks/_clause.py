"""What a verb's clause says, read from the dependency parse, for the readings of a named
machine and of a claimed change: whether it is negated, its subject (inherited along chains),
whether that subject is the lab, the clause's own words, and whether it holds only for now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.checks._stance_words import (
    LAB,
    OTHER_CLAUSES,
    PASSING_STATES,
    PASSING_TIMES,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


def negated(verb: Token) -> bool:
    """The verb, or one that governs it through an xcomp ("don't seem to have"), is
    negated."""
    while True:
        if any(c.dep_ == "neg" or c.lower_ in ("never",) for c in verb.children):
            return True
        if verb.dep_ in ("xcomp", "ccomp") and verb.head.i != verb.i:
            verb = verb.head
            continue
        return False


def inherited_subject(verb: Token) -> Token | None:
    """The verb's subject, inherited along xcomp and conj chains."""
    seen = 0
    while seen < 6:
        for c in verb.children:
            if c.dep_ in ("nsubj", "nsubjpass", "expl"):
                return c
        if verb.dep_ in ("xcomp", "conj", "ccomp", "advcl") and verb.head.i != verb.i:
            verb = verb.head
            seen += 1
            continue
        return None
    return None


def is_lab(subject: Token | None, *, finding: bool = False) -> bool:
    if subject is None:
        return False
    words = {t.lower_ for t in subject.subtree}
    if finding:
        return subject.lower_ in ("i", "we")
    if subject.lower_ == "i":
        return False
    return bool(words & LAB)


def clause_of(verb: Token) -> list[Token]:
    """The verb's own clause: its subtree without the clauses joined to it."""
    out = [verb]
    for child in verb.children:
        if child.dep_ not in OTHER_CLAUSES:
            out.extend(child.subtree)
    return out


def passing(verb: Token, mention: Token) -> bool:
    """Only for now: a time, or a state of the machine (free, available, booked, until …)."""
    names = {t.i for t in mention.subtree if t.pos_ == "PROPN" or t.i == mention.i}
    around = [t for t in clause_of(verb) if t.i not in names]
    if any(t.lower_ in PASSING_STATES for t in around):
        return True
    if any(t.lower_ in ("yet", "anymore", "currently") for t in around):
        return False
    return any(t.lower_ in PASSING_TIMES for t in around)
