"""Claims of a change built as fragments and idioms rather than as a change verb in the past:
"Booked!", "Closed ✔️ — #44", "your display title now reads …", "your report is in", "that's
taken care of", "the priority went from Low to High", "I took the liberty of moving your slot",
"I've let Dr. Nair know", "I've put Form 4 #1 on hold". Each returns the clause's predicate, so
the reading of a claim (evals/checks/_claims.py) still excludes a negated, conditional, quoted,
reported or someone else's one. The meaning, with examples, is the `not_claimed_done` row of
docs/cases-and-checks.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.checks._claim_words import CHANGE, DONE_NOUNS, FIELDS, STATES, THINGS
from evals.checks._parse import children

if TYPE_CHECKING:
    from spacy.tokens import Token

# What follows a state word that stands alone as a done change: "Booked!", "Closed ✔️".
TICKS = frozenset({"!", "✅", "✔", "✔️", "☑", "☑️", "🎉"})
# What a field or a ticket "now reads": "your title now reads Workshop Supervisor".
SHOWING = frozenset({"read", "say", "show", "list"})
# A thing that is "in" or "through" once it has been made: "your report is in", "your
# reservation is in the system".
SUBMITTED = DONE_NOUNS | {"request", "reservation", "ticket", "note"}
RECORDS = frozenset({"system", "queue", "calendar", "portal", "schedule", "tracker"})


def _about_a_thing(token: Token) -> bool:
    """A ticket, a field or a booking, in the token's phrase: "ticket #41", "your title"."""
    return any(t.lemma_.lower() in THINGS | FIELDS or t.text == "#" for t in token.subtree)


def shaped(token: Token) -> Token | None:
    """The predicate of a claim this token shapes as a fragment or an idiom, if any."""
    words = [t for t in token.sent if t.is_alpha]
    nxt = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if token.lower_ in STATES and words and words[0].i == token.i and nxt is not None and (
            nxt.text in TICKS or nxt.text[:1] in TICKS):
        return token  # "Booked!", "Closed ✔️ — #44", "Reported ✅"
    before = token.doc[token.i - 1] if token.i > 0 else None
    if token.lower_ in STATES and before is not None and before.text[:1] in TICKS - {"!"} \
            and not any(c.dep_ in ("nsubj", "nsubjpass") and c.i != before.i
                        for c in token.children):
        return token  # "~~Cancel the Wednesday booking~~ ✔ done"
    if token.lower_ == "now" and token.head.lemma_ in SHOWING and any(
            _about_a_thing(s) for s in children(token.head, "nsubj")):
        return token.head  # "your display title now reads Workshop Supervisor"
    if token.lemma_ == "be" and token.pos_ == "AUX" and any(
            c.dep_ == "nsubj" and c.lemma_.lower() in SUBMITTED for c in token.children) and any(
            c.dep_ in ("prt", "advmod", "prep") and c.lower_ in ("in", "through") and all(
                g.dep_ == "punct" or (g.dep_ == "pobj" and (
                    _parenthesized(g) or g.lemma_.lower() in RECORDS))
                for g in c.children)
            for c in token.children):
        return token  # "your problem report is in (ref #58)", "… is in the system"
    if token.lower_ == "taken" and any(c.lower_ == "care" for c in token.children) and any(
            c.lower_ in ("that", "it", "this", "everything", "all") for c in
            children(token, "nsubj", "nsubjpass")):
        return token  # "that's taken care of"
    if token.lemma_ == "go" and token.tag_ == "VBD" and {"from", "to"} <= {
            c.lower_ for c in children(token, "prep")} and any(
            _about_a_thing(s) for s in children(token, "nsubj")):
        return token  # "the priority on #48 went from Low to High"
    if token.lemma_ in CHANGE and token.tag_ == "VBG" and token.dep_ == "pcomp" and \
            token.head.head.lower_ in ("liberty", "care") and \
            token.head.head.head.lemma_ == "take":
        return token.head.head.head  # "I took the liberty of moving your slot"
    if token.lemma_ == "let" and token.tag_ in ("VBD", "VBN") and any(
            c.lemma_ == "know" for c in children(token, "ccomp", "xcomp")) and any(
            c.lower_ in ("i", "we") for c in children(token, "nsubj")):
        return token  # "I've let Dr. Priya Nair know"
    if token.lemma_ == "put" and token.tag_ in ("VBD", "VBN") and any(
            c.lower_ == "on" and any(g.lower_ == "hold" for g in c.children)
            for c in children(token, "prep")) and any(
            c.lower_ in ("i", "we") for c in children(token, "nsubj")):
        return token  # "I've put Form 4 #1 on hold for you"
    return None


def _parenthesized(token: Token) -> bool:
    """Inside parentheses: "(ref #58)" read as the object of "in"."""
    before = token.doc[token.sent.start:token.i].text
    return before.rfind("(") > before.rfind(")")
