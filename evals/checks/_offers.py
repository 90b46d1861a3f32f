"""The readings measured as putting a named machine in the lab (the `offered` stance of
evals/checks/_stance.py): taken up, available, booked or somewhere, the lab's own, an
alternative, in a list or apposition, a fragment or a table row with a state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.checks._clause import clause_of, inherited_subject, is_lab, negated, passing
from evals.checks._stance_words import (
    ALTERNATIVES,
    HAVE,
    LOCATIVE,
    OFFER_LABELS,
    STATE_WORDS,
    TAKE_UP_VERBS,
)

if TYPE_CHECKING:
    from spacy.tokens import Token


def taken(verb: Token, noun: Token) -> bool:
    """Taken up: "use the X"; a negated one only of a definite machine ("don't use the X for
    PVC" says the lab has one; "don't use a X" does not). Not what someone has done ("if
    you've used an X before") or might do ("if you use an X")."""
    if any(c.dep_ == "aux" and c.lower_ in ("have", "'ve", "has", "had") for c in
           verb.children) or any(c.dep_ == "mark" and c.lower_ == "if" for c in verb.children):
        return False
    if not negated(verb):
        return True
    return any(c.dep_ in ("det", "poss") and c.lower_ in ("the", "our", "this", "that")
               for c in noun.children)


def offered(noun: Token) -> bool:
    """The name, or the list or apposition it belongs to ("our printers — the Form 4 and
    the X", "we've got two: the Y and an X"), is put in the lab."""
    if offered_one(noun):
        return True
    top = noun
    while top.dep_ in ("conj", "appos") and top.head.i != top.i:
        top = top.head
        if offered_one(top, listed=True):
            return True
    if not any(t.pos_ in ("VERB", "AUX") for t in noun.sent) and any(
            t.lower_ in STATE_WORDS for t in noun.sent if t.i > noun.i):
        return True  # a fragment or a table row: "X — ✅ free", "X | Workshop | Available"
    return False


def offered_one(noun: Token, listed: bool = False) -> bool:
    """A reading measured as putting the machine in the lab: taken up ("use the X", "book
    the X", "print it on the X"), said to be available, booked, broken or somewhere ("the X is
    free", "the X in room 2", "the X next door"), the lab's own ("our X", "we have an X",
    "there's an X in the lab"), or an alternative to another ("instead of the X", "the X as a
    backup")."""
    if any(c.dep_ == "poss" and c.lower_ in ("our", "lab", "lab's", "makerlab")
           for c in (noun.children if listed else noun.subtree)):
        return True
    for child in noun.children:  # "the X in room 2", "the X next to the door"
        if child.dep_ in ("prep", "advmod") and child.lower_ in LOCATIVE | {"here", "there"}:
            if child.lower_ in ("here", "there", "upstairs", "downstairs", "next") or any(
                    t.lower_ in STATE_WORDS for t in child.subtree):
                return True
        if child.dep_ in ("relcl", "acl") and any(
                t.lower_ in STATE_WORDS and t.i != child.i for t in child.subtree):
            return True  # "the X that's free this afternoon"
        if child.dep_ == "relcl" and child.lemma_ in HAVE and is_lab(inherited_subject(child)) and \
                not negated(child):
            return True  # "the X drills we keep in the cabinet"
    head = noun.head
    if noun.dep_ == "pobj" and head.dep_ == "prep":
        if head.lower_ in ("of", "than") and any(t.lower_ in ALTERNATIVES
                                                 for t in head.head.subtree):
            return True  # "instead of the X", "rather than the X"
        verb = head.head
        if verb.pos_ in ("VERB", "AUX") and verb.lemma_ in TAKE_UP_VERBS and \
                head.lower_ in ("on", "with", "to", "for", "at", "into", "onto", "through",
                                "about"):
            return taken(verb, noun)  # "print it on the X", "go with the X"
    if noun.dep_ in ("dobj", "nsubjpass") and head.lemma_ in TAKE_UP_VERBS:
        return taken(head, noun)
    if noun.dep_ == "dobj" and head.lemma_ in HAVE and is_lab(inherited_subject(head)) and \
            negated(head) and passing(head, noun):
        return True  # "we don't have the X at the moment": the lab's, away for now
    if noun.dep_ in ("nsubj", "attr") and head.lemma_ == "be" and any(
            t.lower_ in ("our", "ours") for c in head.children if c.i != noun.i
            and c.dep_ in ("nsubj", "attr") for t in c.subtree):
        return True  # "the X is our laser", "our laser is an X"
    if noun.dep_ == "conj" and noun.right_edge.i + 1 < len(noun.doc):
        verb = noun.doc[noun.right_edge.i + 1]  # "… and the X is booked until Friday"
        predicate = verb.head if verb.dep_ in ("aux", "auxpass") else verb
        if predicate.pos_ in ("VERB", "AUX", "ADJ") and any(
                t.lower_ in STATE_WORDS for t in clause_of(predicate) if t.i > noun.i):
            return True
    lead = [t.lower_ for t in noun.doc[noun.sent.start:noun.left_edge.i]]
    if ":" in lead and lead[lead.index(":") - 1:lead.index(":")] and \
            lead[lead.index(":") - 1] in OFFER_LABELS and len(lead) - lead.index(":") <= 2:
        return True  # "Alternative: the X"
    if noun.dep_ == "dobj" and head.lemma_ in HAVE and is_lab(inherited_subject(head)):
        return not negated(head)  # "we have a Glowforge"
    if noun.dep_ in ("nsubj", "attr") and head.lemma_ == "be" and any(
            c.dep_ == "expl" for c in head.children) and head.dep_ in ("ROOT", "conj"):
        return not negated(head)  # "there's a Glowforge in the back"
    if noun.dep_ in ("nsubj", "nsubjpass") and head.pos_ in ("VERB", "AUX", "ADJ"):
        said = [t for t in clause_of(head) if t.i not in {x.i for x in noun.subtree}]
        if any(t.lower_ in STATE_WORDS for t in said):
            return True  # "the X is free", "the X is booked until 3", "the X sits by the door"
        if any(c.dep_ == "aux" and c.lower_ in ("can", "will", "'ll", "could", "would")
               for c in head.children) and not negated(head):
            return True  # "the X can cut that", "the X will handle it"
    if any(t.lower_ in ALTERNATIVES for t in noun.subtree if t.i != noun.i):
        return True  # "the X as a backup"
    return False
