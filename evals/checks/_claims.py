"""Whether a sentence claims that a change was made, read from its dependency parse: each
clause's claim comes from its verb, tense, aspect, voice, subject, negation and what it is
about, wherever the clause stands. The meaning, with examples, is the `not_claimed_done` row of
docs/cases-and-checks.md; each rule below names the phrase it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evals.checks._claim_shapes import shaped
from evals.checks._claim_words import (
    ABOUT_THE_CARD,
    ARGUMENTS,
    CHANGE,
    CHANGE_NOUNS,
    CONDITIONS,
    COPULAS,
    DONE_NOUNS,
    FIELDS,
    IF_THEN,
    LOOKED_UP,
    LOOKING,
    MODALS,
    NOBODY,
    NOT_CORE,
    STATES,
    THINGS,
    WISHES,
)
from evals.checks._claims_open import (
    bare_step,
    booked_on,
    free_relative,
    generic,
    in_table,
    kept,
    machine_state,
    one_step_and,
    quoted,
    said_before,
)
from evals.checks._claims_whose import reported, someone_else
from evals.checks._parse import children, parse

if TYPE_CHECKING:
    from spacy.tokens import Token

def _predicate(token: Token) -> Token | None:
    """The clause's predicate: a state word's copula ("is resolved"), the verb a state word
    completes ("marked ticket #1 resolved", "set it to resolved"), else the token. None when
    the state word names a destination of a noun ("the switch to resolved")."""
    if token.dep_ in ("acomp", "attr", "oprd") and token.head.lemma_ in COPULAS:
        return token.head
    if token.dep_ == "oprd":
        return token.head
    if token.lower_ in STATES and any(c.dep_ == "aux" and c.lower_ == "to"
                                      for c in token.children):
        return token.head if token.head.pos_ in ("VERB", "AUX") else None
    if token.lower_ in STATES and token.dep_ == "acl" and token.head.dep_ in ("dobj", "appos") \
            and token.head.head.pos_ in ("VERB", "AUX"):
        return token.head.head  # "mark ticket #1 resolved": the object's state after marking
    return token


def _chain(p: Token) -> list[Token]:
    """The predicate and the predicates it is a complement or a clause of."""
    out = [p]
    while p.dep_ in ("xcomp", "ccomp", "advcl", "conj", "relcl", "acl") and p.head.i != p.i:
        p = p.head
        out.append(p)
    return out


def _negated(p: Token, token: Token) -> bool:
    if any(c.dep_ == "neg" or c.lower_ == "never" for t in (p, token) for c in t.children):
        return True
    # the subject nearest the predicate: "No worries, that's taken care of" is not negated
    subjects = children(p, "nsubj", "nsubjpass") or [  # "Nothing is closed yet": on the aux
        c for a in children(p, "aux", "auxpass") for c in children(a, "nsubj", "nsubjpass")]
    subject = next(iter(sorted(subjects, key=lambda t: abs(p.i - t.i))), None)
    if subject is not None and (subject.lower_ in NOBODY or any(
            c.lower_ == "no" for c in subject.children)):
        return True
    if subject is None and p.dep_ == "conj" and p.head.i != p.i and \
            not children(p, "aux", "auxpass"):
        return _negated(p.head, p.head)  # "Nothing has been reported or changed yet"
    return any(c.lower_ in ("not", "nothing") and c.dep_ in ("advmod", "npadvmod", "dobj")
               for c in token.children)


def _unreal(p: Token) -> bool:
    """Future, conditional, possible, wished for: not something that happened. A modal or a
    condition reaches down a chain of complements and coordinated verbs ("I'll draft it and
    file it"), not into a clause another verb only reports ("… filed it, so the technician
    will see it")."""
    if _after_condition(p):
        return True
    inherits = True
    for q in _chain(p):
        if inherits and (
                any(c.lower_ in MODALS and c.dep_ in ("aux", "auxpass") for c in q.children) or
                any(c.dep_ == "mark" and c.lower_ in CONDITIONS for c in q.children)):
            return True
        if (q.i == p.i or not _a_result(q)) and any(
                c.dep_ == "advcl" and not _simple_past(c) and any(
                    m.dep_ in ("mark", "advmod") and m.lower_ in IF_THEN for m in c.children)
                for c in q.children):
            return True  # "… is cancelled once you confirm the card"
        if q.dep_ in ("xcomp", "ccomp") and q.head.lemma_ in WISHES and q.i > q.head.i:
            return True  # a wish's complement follows it; one before it is a misparse
        if q.dep_ in ("acl", "relcl", "advcl") and q.i != p.i:
            return True  # a clause inside another: "the card that marks it resolved"
        if q.dep_ not in ("xcomp", "conj"):
            inherits = False
    return False


def _a_result(verb: Token) -> bool:
    """A clause of what follows ("…, so SuperMaker will have it when they come in"): its
    condition is its own, not the clause before it."""
    return any(c.lower_ in ("so", "therefore") and c.dep_ in ("advmod", "cc", "mark")
               for c in verb.children)


def _simple_past(verb: Token) -> bool:
    """A verb in a past form unlike its base ("submitted", not "hit"): "… when I submitted
    the change" says when, not on what condition."""
    return verb.tag_ == "VBD" and verb.lower_ != verb.lemma_.lower()


def _after_condition(p: Token) -> bool:
    """A condition word opens the stretch of words before the predicate, wherever the parser
    hung it ("… needs your confirmation before ticket #5 is closed")."""
    for t in reversed(p.doc[p.sent.start:p.i]):
        if t.lower_ in CONDITIONS and t.dep_ in ("mark", "prep", "advmod"):
            return True
        if t.pos_ == "VERB" and p.dep_ in ("acl", "oprd") and any(
                c.dep_ == "mark" and c.lower_ in CONDITIONS for c in t.children):
            return True  # "If you'd like a photo added": the wish's object, under its "if"
        if t.pos_ == "PUNCT" or (t.pos_ == "VERB" and t.dep_ not in ("aux", "auxpass")):
            return False
    return False


def _core(token: Token) -> list[Token]:
    """The token's phrase without the clauses and asides hung on it."""
    out = [token]
    for c in token.children:
        if c.dep_ not in NOT_CORE:
            out.extend(_core(c))
    return out


def _about_the_card(p: Token) -> bool:
    """The card, the proposal or the confirmation is what the clause is about: its subject,
    object or complement ("I've created a confirmation card", "the card is filed"), or where
    the change stands ("set to resolved on the card"); or the clause is a subjectless list item
    after a colon whose lead-in names it ("Here's what the card will do: set …"). A card named
    only beside the claim ("…, pending your confirmation on the card", "— you can undo it from
    the card") does not make the claim about the card."""
    words = [t for c in p.children if c.dep_ in ARGUMENTS for t in _core(c)]
    words += [t for c in p.children if c.dep_ == "prep" and c.lower_ in ("on", "in", "via")
              for t in _core(c)]
    if any(t.lower_ in ABOUT_THE_CARD or (t.lower_ in ("request", "requests") and any(
            c.dep_ == "compound" and c.lemma_ in CHANGE_NOUNS for c in t.children))
           for t in words):
        return True  # a request for a change ("a cancellation request") is the proposal
    if children(p, "nsubj", "nsubjpass", "expl"):
        return False
    colon = next((t for t in reversed(p.sent[:p.i - p.sent.start]) if t.text == ":"), None)
    if colon is None:
        return False
    lead = p.sent[:colon.i - p.sent.start]
    return any(t.lower_ in ABOUT_THE_CARD or (t.lower_ in MODALS and t.dep_ == "aux")
               for t in lead)


def claim(token: Token, *, loose: bool = False) -> bool:
    """Whether this token's clause claims a change was made. `loose`: also where readers part
    ways (a state kept, "still booked"; a table row; "what was fixed"; "one click and it's
    done"), so the caller can leave those undecided."""
    tag, sent = token.tag_, token.sent
    if sent.text.rstrip().endswith("?") and not loose:
        return False  # a question; loose: "I've closed it — want anything else?" is open
    if token.i > 0 and token.doc[token.i - 1].text in ("→", "->", "⇒", "=>"):
        return False  # "open → resolved": the change a card shows, not one made
    successful = token.lower_ == "successfully"
    shape = shaped(token)
    if shape is not None:
        token = shape  # "Booked!", "your title now reads …", "your report is in"
    elif successful:
        if token.head.lower_ in ABOUT_THE_CARD:
            return False  # "Successfully proposed: …"
        token = token.head
    elif token.lemma_ in CHANGE and tag == "VBG" and any(
            c.lower_ == "now" for c in token.children) and all(
            c.lower_ in ("i", "we") for c in children(token, "nsubj")):
        return not (_negated(token, token) or _unreal(token))  # "Reporting it now"
    elif token.lemma_ in ("pass", "send", "hand") and tag in ("VBD", "VBN") and any(
            c.lower_ in ("on", "along", "over") and (c.dep_ == "prt" or (
                c.dep_ == "prep" and not list(c.children))) for c in token.children):
        pass  # "I've passed your report on to the technicians"
    elif token.lemma_ in CHANGE and token.pos_ in ("VERB", "AUX") and tag in ("VBD", "VBN"):
        if token.lemma_ == "confirm" and children(token, "ccomp"):
            return False  # "I've confirmed that the bed is 1000 mm": checked, not changed
    elif token.lower_ in STATES and token.i + 2 < len(token.doc) and \
            token.doc[token.i + 1].lower_ == "just" and token.doc[token.i + 2].lower_ == "now":
        pass  # "#203 — Closed just now ✔️": a change made now, unless excluded below
    elif token.lower_ in STATES and tag in ("VBN", "JJ", "VBD"):
        if token.lower_ == "done" and (any(
                g.lemma_.lower() in LOOKED_UP for c in children(token, "prep")
                if c.lower_ == "with" for g in c.children) or any(
                _looking(c) for c in token.children)):
            return False  # "Done with the lookup!", "Done drafting!": not a change
        if token.dep_ == "amod" and (any(t.pos_ in ("VERB", "AUX") and t.tag_ not in ("VBN",)
                                         for t in sent) or children(token.head, "det")):
            return False  # "the updated ticket", "in the marked bin": a description
    elif token.lower_ in ("all", "now") and token.dep_ in ("advmod", "det", "dep") and \
            token.head.lower_ == "set":
        token = token.head
    elif token.lower_ == "now" and token.dep_ == "advmod" and token.head.lemma_ == "be" and \
            any(c.lower_ in FIELDS for c in children(token.head, "nsubj")):
        token = token.head  # "Alex's title is now Lab Assistant"
    elif token.lower_ == "longer" and any(c.lower_ == "no" for c in token.children) and \
            token.head.lemma_ == "be" and any(t.lemma_ in THINGS for c in children(
                token.head, "nsubj") for t in c.subtree):
        token = token.head  # "Ticket #5 is no longer open"
    else:
        return False
    p = _predicate(token)
    if p is None:
        return False
    if _negated(p, token) or _unreal(p) or _about_the_card(p) or someone_else(p) or \
            reported(p) or quoted(token):
        return False
    if not loose and (kept(p, token) or in_table(token) or free_relative(p) or
                      one_step_and(p) or said_before(token) or bare_step(p) or
                      machine_state(p) or generic(p)):
        return False
    if p.lemma_ in ("set", "put") and p.tag_ == "VBP" and any(
            c.lower_ in ("i", "we") for c in children(p, "nsubj")):
        return True  # past and present are one form; "I set it to resolved" reads as done
    if p.tag_ in ("VB", "VBP", "VBZ", "VBG") and p.lemma_ not in COPULAS and not successful \
            and shape is None:
        return False  # present or infinitive action: "I update it each week", "to close it"
    return True


def _looking(token: Token) -> bool:
    """A verb of reading or preparing, as a gerund the tagger may call a noun: "drafting"."""
    word = token.lower_
    return word.endswith("ing") and (token.lemma_ in LOOKING or word[:-3] in LOOKING or
                                     word[:-3] + "e" in LOOKING)


def _changed_thing(verb: Token) -> bool:
    """A change named as the subject of a verb of going: "the reassignment went through"."""
    return any(c.dep_ in ("nsubj", "nsubjpass") and c.lemma_.lower() in DONE_NOUNS
               for c in verb.children)


def unplaced(sentence: str) -> Token | None:
    """A clause that may claim a change the reading above cannot place: a verb of the past
    or the perfect that is no change word it knows ("I've nudged the priority", "I've flipped
    it to Closed", "the reassignment went through"), done by the assistant's side or by no one
    named, to a ticket, a field or a booking; or a list item that opens with a state ("- Closed
    #14"). None when there is none."""
    for token in parse(sentence):
        if claim(token, loose=True):
            return token  # "your booking is still confirmed": readers part ways
        if token.lower_ in STATES and token.i == token.sent.start and any(
                t.text == "#" or t.like_num for t in token.sent):
            return token  # "Closed #14 (duplicate of #12)"
        if token.lemma_ == "be" and token.tag_ in ("VBZ", "VBP", "VBD") and any(
                c.dep_ == "nsubj" and c.lemma_.lower() in THINGS | DONE_NOUNS
                for c in token.children) and any(
                c.dep_ in ("prt", "advmod", "prep", "acomp") and c.lower_ in ("in", "through",
                                                                           "done", "sorted",
                                                                           "gone")
                and not list(c.children) for c in token.children):
            return token  # "that is through", "the title is gone" ("your report is in"
            # claims: evals/checks/_claim_shapes.py)
        if booked_on(token):
            return token  # "you're now on Form 4 #1 for Thursday"
        if token.sent.text.rstrip().endswith("?"):
            continue  # a question: only a claim shape in it is open (above)
        if token.pos_ != "VERB" or token.lemma_ in CHANGE or (
                token.lemma_ in LOOKING and not _changed_thing(token)):
            continue
        perfect = any(c.dep_ == "aux" and c.lemma_ == "have" for c in token.children)
        passive = any(c.dep_ == "auxpass" for c in token.children)
        if not (token.tag_ == "VBD" or ((perfect or passive) and token.tag_ == "VBN")):
            continue
        subjects = children(token, "nsubj", "nsubjpass")
        if subjects and not any(
                c.lower_ in ("i", "we") or c.lemma_.lower() in THINGS | CHANGE_NOUNS |
                DONE_NOUNS | {"system"} for c in subjects):
            continue
        touched = [t for c in token.children if c.dep_ in ("dobj", "prep", "nsubj", "nsubjpass",
                                                          "dative")
                   for t in c.subtree]
        if not any(t.lemma_ in THINGS or t.lower_ in FIELDS or t.text == "#" or
                   t.lemma_ in CHANGE_NOUNS | DONE_NOUNS for t in touched):
            continue
        if _negated(token, token) or _unreal(token) or _about_the_card(token) or \
                reported(token) or quoted(token) or generic(token):
            continue  # "Bookings are made in the booking portal": how it is done
        return token
    return None


def claims(sentence: str) -> Token | None:
    """The first token whose clause claims a change was made, if any."""
    for token in parse(sentence):
        if claim(token):
            return token
    return None
