"""What an answer does with a machine it names, read from the sentence's dependency parse:
**denied** (the lab does not have it), **asked** (in a question), **offered** (a reading that
puts it in the lab: recommended or taken up, available, booked, located, the lab's own, an
alternative "instead of" another), **named** (a name that only says which part or preset:
"any X presets"), **person** (a bare name used of someone: "ask Roland") or **unplaced** (any
other mention: a comparison, an aside, general knowledge; readers part ways on those, so the
check does not decide them). The meaning, with examples, is the `no_unknown_tools` row of
docs/cases-and-checks.md; each rule below names the phrase it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from evals.checks._clause import inherited_subject, is_lab, negated, passing
from evals.checks._offers import offered
from evals.checks._parse import covering, head_of, parse
from evals.checks._stance_surface import (
    compared,
    denied_after,
    denied_by_pronoun,
    in_use_here,
    listed_here,
)
from evals.checks._stance_words import (
    FIND,
    HAVE,
    LAB,
    MACHINE_NOUNS,
    MEMBER_PREPS,
    PERSON_PLACES,
    PERSON_VERBS,
    PLACES,
    TAKE_UP,
)

if TYPE_CHECKING:
    from spacy.tokens import Token

Stance = Literal["denied", "asked", "offered", "named", "person", "unplaced"]

def _determined_by_no(token: Token) -> bool:
    """*No* or *neither* opens the noun phrase ("no band saw": *no* may hang on *band*)."""
    return any(t.dep_ in ("det", "preconj", "advmod", "neg") and t.lower_ in ("no", "neither")
               for t in token.subtree if t.i < token.i)


def _model_like(token: Token) -> bool:
    """A token that can only be part of a machine's name: a proper noun, a number, a model
    code ("K1", "3L", "XL")."""
    return token.pos_ in ("PROPN", "NUM") or any(ch.isdigit() for ch in token.text) or (
        token.text.isupper() and len(token.text) <= 4)


def _member_predicate(verb: Token, subject: Token) -> bool:
    """A predicate saying the subject is one of the lab's machines."""
    for t in verb.subtree:
        if t in subject.subtree:
            continue
        if t.lower_ in PLACES and any(a.lower_ in MEMBER_PREPS or a.dep_ in ("poss", "relcl")
                                      or a.lower_ in ("our", "the", "this") for a in
                                      [t.head, *t.children]):
            return True
        if t.dep_ == "relcl" and t.lemma_ in HAVE and is_lab(inherited_subject(t)):
            return True
        if t.lower_ in ("listed", "stocked", "owned", "carried") and t.head == verb:
            return True
        if t.lower_ in ("part",) and any(c.lower_ == "of" for c in t.children):
            return True
    return False


def _root(token: Token) -> Token:
    """The mention as a noun phrase: a name that only says which machine noun ("X printers",
    "the X laser") stands for that noun."""
    while token.dep_ in ("compound", "amod", "nmod", "nummod", "appos") and \
            token.head.i != token.i and (token.head.lower_ in MACHINE_NOUNS or (
                token.dep_ in ("compound", "nummod", "nmod") and (
                    _model_like(token.head) or token.head.pos_ not in ("NOUN", "VERB")))):
        token = token.head  # "Bambu Lab X1 Carbon", "Creality K1" are one name
    return token


def _first_conjunct(token: Token) -> Token:
    """The first of coordinated names; a name in parentheses is not carried ("a Glowforge (or
    an xTool)" is an aside, read on its own)."""
    while token.dep_ == "conj" and token.head.i != token.i and (
            token.head.pos_ in ("NOUN", "PROPN", "NUM", "PRON") or
            token.head.dep_ in ("dobj", "nsubj", "nsubjpass", "attr", "pobj", "appos")):
        between = token.doc[min(token.head.i, token.i):max(token.head.i, token.i)]
        if any(t.text in "()[]" for t in between):
            return token
        after = token.right_edge.i + 1
        if after < len(token.doc) and token.doc[after].pos_ in ("AUX", "VERB"):
            verb = token.doc[after]
            predicate = verb.head if verb.dep_ in ("aux", "auxpass") else verb
            governing = token
            while governing.dep_ == "conj" and governing.head.i != governing.i:
                governing = governing.head
            if predicate.i != governing.head.i:
                return token  # "… a Glowforge and the Epilog is booked": a clause of its own
        token = token.head
    return token


def _neither_clause(verb: Token) -> bool:
    """"…, and neither is X" / "nor is X": a clause that carries a denial before it over."""
    return verb.lemma_ == "be" and verb.dep_ == "conj" and any(
        c.lower_ in ("neither", "nor") for c in verb.children) and negated(verb.head)


def _denied_noun(noun: Token) -> bool:
    """The noun phrase (its first conjunct) is what a lab-denial denies."""
    if noun.dep_ == "conj" and any(c.dep_ == "neg" for c in noun.children):
        first = _first_conjunct(noun)  # "we have the MK4 but not the XL"
        verb = first.head
        if first.dep_ == "dobj" and verb.lemma_ in HAVE and is_lab(inherited_subject(verb)) and \
                not negated(verb):
            return True
    noun = _first_conjunct(noun)
    head = noun.head
    if noun.dep_ in ("attr", "nsubj") and _neither_clause(head):
        return True
    # "a laser cutter like the X", "such as the X": the machine noun it exemplifies
    if noun.dep_ == "pobj" and head.lower_ in ("like", "as") and head.head.lower_ in \
            MACHINE_NOUNS:
        return _denied_noun(head.head)
    if noun.dep_ in ("dobj", "attr", "npadvmod") and head.pos_ in ("VERB", "AUX"):
        verb = head
        if verb.lemma_ in HAVE | {"be"} and verb.lemma_ != "be":
            subject = inherited_subject(verb)
            if is_lab(subject) and (negated(verb) or _determined_by_no(noun)) and \
                    not passing(verb, noun):
                return True
        if verb.lemma_ in FIND and negated(verb) and is_lab(inherited_subject(verb), finding=True):
            return True
        if verb.lemma_ == "lack" and is_lab(inherited_subject(verb)) and not passing(verb, noun):
            return True
        if verb.lemma_ == "be" and any(c.dep_ == "expl" for c in verb.children) and (
                negated(verb) or _determined_by_no(noun)) and not passing(verb, noun):
            return True  # "there is no X", "there isn't an X"
    if noun.dep_ in ("nsubj", "nsubjpass") and head.pos_ in ("VERB", "AUX"):
        verb = head
        if verb.lemma_ == "be" and any(c.dep_ == "expl" for c in verb.children):
            return (negated(verb) or _determined_by_no(noun)) and not passing(verb, noun)
        neither = any(c.lower_ == "neither" for c in noun.subtree)
        if (negated(verb) or neither or _determined_by_no(noun)) and \
                _member_predicate(verb, noun) and not passing(verb, noun):
            return True
        if verb.lemma_ in HAVE and verb.dep_ == "relcl":
            return False
    if noun.dep_ in ("ROOT", "nsubj", "dobj", "appos", "npadvmod", "attr", "dep", "conj") and \
            _determined_by_no(noun) and (noun.dep_ in ("ROOT", "conj", "dep") or
                                         noun.head.pos_ not in ("VERB", "AUX") or
                                         noun.head.lemma_ in HAVE | {"be"}):
        # "No X here", "No X or Y in this lab", "…, and no X either"; "No X is free today"
        # is only for now
        verb = noun.head if noun.dep_ == "nsubj" else noun
        return not passing(verb, noun)
    if noun.dep_ == "pobj" and head.dep_ == "prep" and head.head.lower_ in MACHINE_NOUNS:
        return _denied_noun(head.head)
    return False


def _person(noun: Token) -> bool:
    """A bare name (no article) used of a person: "Roland from the technician team can walk
    you through it", "ask Roland"."""
    if not noun.text[:1].isupper() or any(c.dep_ in ("det", "poss") for c in noun.children):
        return False
    for prep in noun.children:
        if prep.dep_ == "prep" and prep.lower_ in ("from", "on", "in", "at") and any(
                t.lower_ in PERSON_PLACES for t in prep.subtree):
            return True
    if noun.dep_ == "nsubj" and noun.head.lemma_ in PERSON_VERBS:
        return True
    return noun.dep_ in ("dobj", "pobj") and (
        noun.head.lemma_ in ("ask", "contact", "email", "thank", "message") or
        noun.head.lower_ == "to" and noun.head.head.lemma_ in ("talk", "speak", "write"))


def _in_question(token: Token) -> bool:
    sent = token.sent
    return sent.text.rstrip().endswith("?")


def _taken_up(noun: Token) -> bool:
    """A later clause of the sentence takes the denied machine up again by a pronoun: "I can't
    find the Weller, so just grab it", "… yet, but it's on order"."""
    for t in noun.doc[noun.right_edge.i + 1:]:
        if t.lower_ not in ("it", "one", "them") or t.dep_ not in ("nsubj", "dobj", "nsubjpass"):
            continue
        verb = t.head
        if verb.lemma_ == "take" and any(c.dep_ == "prep" and c.lower_ == "to"
                                         for c in verb.children):
            continue  # "take it to the central workshop": the visitor's thing, elsewhere
        on_order = verb.lemma_ == "be" and any(
            c.lower_ == "on" and any(g.lower_ == "order" for g in c.children)
            for c in verb.children)
        if (verb.lemma_ in TAKE_UP or on_order) and not negated(verb):
            return True
    return False


# (An apostrophe is not a quotation mark often enough to read: ' is not among them.)
_QUOTES = (('"', '"'), ("“", "”"), ("‘", "’"))


def _quoted(sentence: str, start: int, end: int) -> bool:
    """The name stands inside quotation marks that open before it and close after it."""
    before = sentence[:start]
    for opening, closing in _QUOTES:
        if opening == closing:
            if before.count(opening) % 2 == 1 and closing in sentence[end:]:
                return True
        elif before.rfind(opening) > before.rfind(closing) and closing in sentence[end:]:
            return True
    return False


def _not_this(noun: Token) -> bool:
    """The machine is said not to be the X: "it's not a Glowforge", "(not Form 3s — …)"."""
    head = noun.head
    if noun.dep_ == "attr" and head.lemma_ == "be" and negated(head) and any(
            c.dep_ == "nsubj" and c.lower_ in ("it", "this", "that", "ours") for c in
            head.children):
        return True
    if noun.dep_ in ("appos", "conj", "npadvmod", "dep", "parataxis") and any(
            c.dep_ == "neg" and c.i < noun.i for c in noun.subtree):
        return True
    # "a Trotec Speedy 400, not an Epilog": the negation hangs on the name it sets against;
    # it denies only the next item ("…, not an Epilog, and a Glowforge Pro" offers the last)
    return noun.dep_ in ("appos", "conj") and any(
        c.dep_ == "neg" and head.i < c.i < noun.i and not any(
            o.dep_ in ("appos", "conj") and c.i < o.i < noun.i for o in head.children)
        for c in head.children)


def answers_no(sentence: str) -> bool:
    """The sentence answers a question about a machine with the lab's no, the machine left
    out or a pronoun: "We don't.", "No, we don't have one.", "The lab has never had one."."""
    for verb in parse(sentence):
        if verb.pos_ not in ("VERB", "AUX") or not is_lab(inherited_subject(verb)) or \
                not negated(verb):
            continue
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        if verb.lemma_ == "do" and not objects:
            return True
        if verb.lemma_ in HAVE and all(o.lower_ in ("one", "it", "them", "any", "those")
                                       for o in objects):
            return True
    return False


def joined(sentence: str, names: Sequence[tuple[int, int]]) -> str:
    """The sentence with the hyphens inside names made letters, so that the parser reads
    "X-Carve" as one name (the offsets stay the same)."""
    chars = list(sentence)
    for start, end in names:
        for i in range(start, end):
            if chars[i] == "-":
                chars[i] = "x"
    return "".join(chars)


def stance(sentence: str, start: int, end: int,
           names: Sequence[tuple[int, int]] = ()) -> Stance | None:
    """What the sentence does with the machine named at sentence[start:end] (other names in
    it at `names`); None when the parse cannot place the name (the caller falls back to the
    word rules, and says so)."""
    doc = parse(joined(sentence, [*names, (start, end)]))
    tokens = covering(doc, start, end)
    head = head_of(tokens) if tokens else None
    if head is None:
        return None
    base = head
    if head.dep_ == "conj":  # "Markforged or Stratasys machines": the list modifies machines
        first = _first_conjunct(head)
        if first.dep_ in ("compound", "nmod", "amod"):
            base = first
    noun = _root(base)
    if listed_here(sentence, start, end):
        return "offered"  # "#55 | Lathe | …", "#38 — Creality Ender 3: …", "Bambu Lab X1 #2"
    if noun.i != base.i and noun.dep_ in ("compound", "amod", "nmod") and \
            noun.head.lower_ not in MACHINE_NOUNS and not _model_like(noun.head):
        return "named"
    if base.dep_ in ("compound", "amod", "nmod", "poss") and noun.i == base.i and \
            base.head.pos_ == "NOUN" and base.head.lower_ not in MACHINE_NOUNS:
        return "named"  # "any X presets": the name says which presets
    if _quoted(sentence, start, end):
        return "unplaced"  # someone else's words: "if your instructor said "the X in …""
    if _person(noun):
        return "person"
    if _not_this(noun) or _not_this(base):
        return "denied"
    if _denied_noun(noun):
        return "offered" if _taken_up(noun) else "denied"
    if denied_after(sentence, end):
        return "denied"  # "…, which the MakerLAB doesn't have"; "…, but it isn't part of …"
    if denied_by_pronoun(sentence, end) or _elsewhere(noun) or _generic(noun) or \
            _if_you_have(noun):
        return "unplaced"
    if _in_question(head):
        return "unplaced" if _experience(noun) or compared(sentence, start, end) else "asked"
    return "offered" if offered(noun) or in_use_here(sentence, start, end) else "unplaced"


_GENERIC = frozenset({"normally", "usually", "typically", "generally", "commonly"})


def _elsewhere(noun: Token) -> bool:
    """Someone else's machine, or one another place has: "your friend's Bambu", "the
    engineering workshop on the north campus has a waterjet"."""
    if any(c.dep_ == "poss" and c.lower_ not in ("our", "its") and c.lemma_.lower() not in LAB
           for c in noun.children):
        return True
    verb = noun.head
    if noun.dep_ == "dobj" and verb.lemma_ in HAVE:
        subject = inherited_subject(verb)
        # a place named by another noun ("the engineering workshop", "the campus woodshop"),
        # not the lab's own ("our main workshop", "the MakerLAB workshop")
        return subject is not None and subject.lemma_.lower() in PLACES | LAB and any(
            c.dep_ == "compound" and c.pos_ in ("NOUN", "PROPN") and
            c.lemma_.lower() not in LAB for c in subject.children) and not any(
            c.dep_ == "poss" for c in subject.children)
    return False


def _generic(noun: Token) -> bool:
    """General knowledge: "you'd normally use a 3D scanner"."""
    verb = noun.head
    return noun.dep_ == "dobj" and any(c.dep_ == "aux" and c.lower_ in ("would", "'d")
                                       for c in verb.children) and any(
        c.dep_ == "advmod" and c.lower_ in _GENERIC for c in verb.children)


def _if_you_have(noun: Token) -> bool:
    """Offered only if the visitor has one: "with a Form Wash if you have one"."""
    verb = noun
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    return any(c.dep_ == "advcl" and c.lemma_ in HAVE and any(
        m.dep_ == "mark" and m.lower_ == "if" for m in c.children) and any(
        n.dep_ == "nsubj" and n.lower_ == "you" for n in c.children) and any(
        o.dep_ == "dobj" and o.lower_ in ("one", "it", "them", "any") for o in c.children)
        for c in verb.children)


_USED = frozenset({"use", "try", "work", "own", "have", "print", "cut"})


def _experience(noun: Token) -> bool:
    """A question about what the visitor did with a machine before, elsewhere or at any time:
    "Used a Form 3 in your old lab?", "Have you worked with an Epilog?"; not one about the
    lab's machine ("Have you booked the Glowforge?", "Did you know our Glowforge is free?")."""
    if any(c.dep_ == "poss" and c.lower_ == "our" for c in noun.children):
        return False
    verb = noun.head.head if noun.dep_ == "pobj" else noun.head
    return verb.pos_ == "VERB" and verb.lemma_ in _USED and (
        verb.tag_ in ("VBD", "VBN") or any(c.dep_ == "aux" and c.lower_ in ("did", "have", "'ve")
                                           for c in verb.children)) and all(
        c.lower_ == "you" for c in verb.children if c.dep_ == "nsubj")
