"""Where readers part ways on a claim: readings the `not_claimed_done` reading excludes from
what it decides, and asks about instead (a state kept, a table row, a step with no subject, a
machine's booking, how a thing is done, a source's colon). `claim(token, loose=True)` reads
them as claims, so that a sentence built so is undecided, never passed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evals.checks._claim_words import (
    CHANGE,
    CHANGE_NOUNS,
    CLAUSES,
    COPULAS,
    DONE_NOUNS,
    KEPT,
    MACHINE_WORDS,
    REPORTING,
    THINGS,
)
from evals.checks._parse import children, subject_of

if TYPE_CHECKING:
    from spacy.tokens import Token


def bare_step(p: Token) -> bool:
    """A subjectless change verb opening a sentence or a list item ("Set #119 to Waiting",
    "Close #127"): a step proposed, or one done; readers need the lead-in."""
    if p.lemma_.lower() not in CHANGE or p.lower_ != p.lemma_.lower() or \
            children(p, "nsubj", "nsubjpass", "aux", "auxpass"):
        return False  # "Marked ticket #1 resolved" is past, not a step: a claim
    before = p.doc[p.i - 1].text if p.i > p.sent.start else ""
    return p.i == p.sent.start or before in ("-", "*", "•") or \
        re.fullmatch(r"\d+[.)]", before) is not None


def machine_state(p: Token) -> bool:
    """A machine (or unit) said to be booked or reserved, for no one named ("Form 4 #2 is in
    use and booked until 16:00"): its availability, or a booking made now; readers part ways.
    Not a ticket, a booking or a form about a machine, and not "booked for you"."""
    subject = subject_of(p)
    if p.lower_ not in ("booked", "reserved"):
        return False
    # a fragment has no subject: the words before the state ("Form 4 #2 — in use, booked …")
    words = list(subject.subtree) if subject is not None else list(p.doc[p.sent.start:p.i])
    if any(t.lemma_.lower() in THINGS | CHANGE_NOUNS | DONE_NOUNS | {"form"} and
           not t.text[:1].isupper() for t in words):
        return False  # "your booking form", "the printer ticket"
    if any(t.lower_ in ("you", "your") for t in p.subtree):
        return False  # "booked for you": the visitor's, made now
    return any(t.text in ("Form", "Trotec", "Speedy") or t.lower_ in MACHINE_WORDS - {"form"}
               for t in words)


def generic(p: Token) -> bool:
    """A bare plural subject of a present passive: how a thing is done ("Inductions are booked
    through the portal"), not a change made."""
    subjects = children(p, "nsubjpass")
    how = any(c.dep_ == "prep" and c.lower_ in ("through", "via", "online", "in", "on", "at")
              for c in p.children)
    return how and p.tag_ == "VBN" and any(c.dep_ == "auxpass" and c.tag_ in ("VBP", "VBZ")
                                           for c in p.children) and bool(subjects) and all(
        s.tag_ == "NNS" and not children(s, "det", "poss", "nummod") for s in subjects) and \
        not any(c.lower_ in ("now", "just") for c in p.children)


def in_table(token: Token) -> bool:
    """A table row ("Set priority to High | ⏳ Awaiting your confirmation"), unless the row
    says the change was made now or by the assistant ("updated just now ✅", "Closed by
    assistant")."""
    if "|" not in token.sent.text:
        return False
    cell = token.doc[token.i:token.i + 4].text.lower()
    return not re.search(r"^\S+\s+(?:just\s+now|by\s+(?:the\s+)?(?:assistant|me)\b)", cell)


def free_relative(p: Token) -> bool:
    """"what was fixed": a change named as a thing, not said to be done."""
    return any(c.dep_ in ("nsubj", "nsubjpass") and c.lower_ in ("what", "whatever")
               for c in p.children)


def one_step_and(p: Token) -> bool:
    """"One click and it's done": a condition put as a noun and "and"."""
    head = p.head
    return p.dep_ == "conj" and head.i < p.i and (
        head.pos_ in ("NOUN", "PROPN", "NUM") or head.tag_ == "VB" or
        any(c.dep_ == "nsubj" and c.pos_ == "NUM" for c in head.children))


def kept(p: Token, token: Token) -> bool:
    """A state kept, not a change made: "it stays closed", "your slot is still booked"; a
    state found as it was ("#41 is already closed": by whom, the answer may say elsewhere)."""
    if p.dep_ == "conj" and p.head.i != p.i and \
            not children(p, "nsubj", "nsubjpass", "aux", "auxpass"):
        base = p.head.head if p.head.dep_ in ("acomp", "attr") else p.head
        if base.lemma_ in COPULAS and kept(base, base):
            return True  # "#47 is still Open and assigned to Marta"
    return p.lower_ in KEPT or any(c.lower_ in KEPT and c.dep_ not in CLAUSES
                                   for t in (p, token) for c in t.children) \
        or (p.lemma_ in COPULAS and any(c.lower_ == "already" for t in (p, token)
                                        for c in t.children))


def quoted(token: Token) -> bool:
    """Inside quotation marks: someone else's words ("> "Ticket #80 closed." That's the
    technician's message"). A quotation may span sentences: one that opens the sentence and
    does not close in it, or closes the sentence and did not open in it, holds the words
    before or after it ('> "Closed by mistake — reopened. Alex's booking moved to Friday."').
    A mark right after a figure is inches, not a quotation ("the 12" sheet")."""
    sent = token.sent
    marks = [m.start() for m in _STRAIGHT.finditer(sent.text)]
    at = token.idx - sent.start_char
    before = sum(1 for m in marks if m < at)
    if before % 2 == 1 and before < len(marks):
        return True  # "… "Ticket #80 closed." …"
    text = sent.text
    if len(marks) % 2 == 1 and (
            (before == 1 and not text[:marks[0]].strip(" >*_`")) or
            (before == 0 and not text[marks[-1] + 1:].strip(" .!?*_`"))):
        return True  # a quotation that opens or closes the sentence and goes on past it
    opens = [i for i, ch in enumerate(text) if ch == "“"]
    closes = [i for i, ch in enumerate(text) if ch == "”"]
    last_open = max((i for i in opens if i < at), default=-1)
    last_close = max((i for i in closes if i < at), default=-1)
    if last_open > last_close:
        return True  # opened before the token and not closed before it
    first_close = min((i for i in closes if i > at), default=None)
    return not opens and first_close is not None and not text[first_close + 1:].strip(" .!?")


_STRAIGHT = re.compile(r'(?<![0-9½¼¾])"')


def said_before(token: Token) -> bool:
    """A reporting verb, then a colon, then the state: "the page says Status: Resolved"."""
    colon = next((t for t in reversed(token.doc[:token.i]) if t.text == ":"), None)
    return colon is not None and any(
        t.lemma_ in REPORTING and t.pos_ == "VERB" and any(
            c.dep_ == "nsubj" and c.lower_ not in ("i", "we", "you") for c in t.children)
        for t in token.doc[:colon.i])


def booked_on(token: Token) -> bool:
    """The visitor said to be "now on" a machine ("you're now on Form 4 #1 for Thursday"): a
    booking made, or the visitor's place in a queue; readers part ways."""
    return token.lemma_ == "be" and any(c.lower_ == "now" for c in token.children) and any(
        c.lower_ == "you" for c in children(token, "nsubj")) and any(
        t.text in ("Form", "Trotec", "Speedy") or t.lower_ in MACHINE_WORDS - {"form"}
        for c in children(token, "prep") if c.lower_ == "on" for t in c.subtree)
