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

from evals.checks._parse import covering, head_of, parse

if TYPE_CHECKING:
    from spacy.tokens import Token

Stance = Literal["denied", "asked", "offered", "named", "person", "unplaced"]

HAVE = frozenset({"have", "own", "stock", "carry", "offer", "keep", "get", "hold", "house",
                  "possess", "provide", "feature", "include"})
FIND = frozenset({"find", "see", "locate", "spot"})
LAB = frozenset({"we", "us", "lab", "makerspace", "makerlab", "space", "workshop", "shop",
                 "facility", "catalogue", "catalog", "inventory", "i"})
PLACES = frozenset({"lab", "makerspace", "makerlab", "catalogue", "catalog", "inventory",
                    "collection", "machines", "list", "equipment", "space", "workshop", "fleet",
                    "shop", "tools", "lineup", "line", "facility", "here", "ours", "offering",
                    "offerings", "range", "setup"})
MEMBER_PREPS = frozenset({"in", "among", "on", "of", "at", "within", "inside"})
MEMBER_WORDS = frozenset({"listed", "stocked", "owned", "carried", "kept", "offered",
                          "available_to_lab"})
MACHINE_NOUNS = frozenset("""
printer printers laser lasers cutter cutters engraver engravers router routers mill mills
machine machines saw saws scanner scanners unit units model models one ones system systems
brand kind type sort device devices tool tools cnc 3d drill drills press presses
""".split())
# An absence only for now. A time says so unless the clause also says "yet", "anymore" or
# "currently" ("we don't currently have one" denies); a state of the machine always does.
PASSING_TIMES = frozenset({"moment", "today", "tonight", "tomorrow", "week", "weekend",
                           "afternoon", "morning", "evening", "instance", "right"})
PASSING_STATES = frozenset({"spare", "available", "free", "booked", "working", "running",
                            "open", "operational", "until", "till"})
NEGATORS = frozenset({"not", "n't", "never", "no"})


def _negated(verb: Token) -> bool:
    """The verb, or one that governs it through an xcomp ("don't seem to have"), is
    negated."""
    while True:
        if any(c.dep_ == "neg" or c.lower_ in ("never",) for c in verb.children):
            return True
        if verb.dep_ in ("xcomp", "ccomp") and verb.head.i != verb.i:
            verb = verb.head
            continue
        return False


def _subject(verb: Token) -> Token | None:
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


def _is_lab(subject: Token | None, *, finding: bool = False) -> bool:
    if subject is None:
        return False
    words = {t.lower_ for t in subject.subtree}
    if finding:
        return subject.lower_ in ("i", "we")
    if subject.lower_ == "i":
        return False
    return bool(words & LAB)


_OTHER_CLAUSES = frozenset({"conj", "parataxis", "advcl", "ccomp", "cc"})


def clause_of(verb: Token) -> list[Token]:
    """The verb's own clause: its subtree without the clauses joined to it."""
    out = [verb]
    for child in verb.children:
        if child.dep_ not in _OTHER_CLAUSES:
            out.extend(child.subtree)
    return out


def _passing(verb: Token, mention: Token) -> bool:
    """Only for now: a time, or a state of the machine (free, available, booked, until …)."""
    names = {t.i for t in mention.subtree if t.pos_ == "PROPN" or t.i == mention.i}
    around = [t for t in clause_of(verb) if t.i not in names]
    if any(t.lower_ in PASSING_STATES for t in around):
        return True
    if any(t.lower_ in ("yet", "anymore", "currently") for t in around):
        return False
    return any(t.lower_ in PASSING_TIMES for t in around)


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
        if t.dep_ == "relcl" and t.lemma_ in HAVE and _is_lab(_subject(t)):
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
        c.lower_ in ("neither", "nor") for c in verb.children) and _negated(verb.head)


def _denied_noun(noun: Token) -> bool:
    """The noun phrase (its first conjunct) is what a lab-denial denies."""
    if noun.dep_ == "conj" and any(c.dep_ == "neg" for c in noun.children):
        first = _first_conjunct(noun)  # "we have the MK4 but not the XL"
        verb = first.head
        if first.dep_ == "dobj" and verb.lemma_ in HAVE and _is_lab(_subject(verb)) and \
                not _negated(verb):
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
            subject = _subject(verb)
            if _is_lab(subject) and (_negated(verb) or _determined_by_no(noun)) and \
                    not _passing(verb, noun):
                return True
        if verb.lemma_ in FIND and _negated(verb) and _is_lab(_subject(verb), finding=True):
            return True
        if verb.lemma_ == "lack" and _is_lab(_subject(verb)) and not _passing(verb, noun):
            return True
        if verb.lemma_ == "be" and any(c.dep_ == "expl" for c in verb.children) and (
                _negated(verb) or _determined_by_no(noun)) and not _passing(verb, noun):
            return True  # "there is no X", "there isn't an X"
    if noun.dep_ in ("nsubj", "nsubjpass") and head.pos_ in ("VERB", "AUX"):
        verb = head
        if verb.lemma_ == "be" and any(c.dep_ == "expl" for c in verb.children):
            return (_negated(verb) or _determined_by_no(noun)) and not _passing(verb, noun)
        neither = any(c.lower_ == "neither" for c in noun.subtree)
        if (_negated(verb) or neither or _determined_by_no(noun)) and \
                _member_predicate(verb, noun) and not _passing(verb, noun):
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
        return not _passing(verb, noun)
    if noun.dep_ == "pobj" and head.dep_ == "prep" and head.head.lower_ in MACHINE_NOUNS:
        return _denied_noun(head.head)
    return False


PERSON_VERBS = frozenset({"walk", "help", "teach", "show", "explain", "supervise", "train",
                          "say", "tell", "know", "reply", "answer", "email", "meet", "sign",
                          "approve", "run", "lead", "host"})
PERSON_PLACES = frozenset({"team", "staff", "office", "desk", "department", "crew"})


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


TAKE_UP = frozenset({"grab", "use", "take", "book", "borrow", "arrive", "come", "collect",
                     "pick", "reserve", "try", "order", "fetch"})


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
        if (verb.lemma_ in TAKE_UP or on_order) and not _negated(verb):
            return True
    return False


# Verbs that take a machine up for the visitor: "use the X", "book the X", "try the X".
TAKE_UP_VERBS = TAKE_UP | frozenset({
    "print", "cut", "engrave", "run", "switch", "pick", "choose", "recommend", "suggest",
    "prefer", "head", "go", "load", "start", "send", "check", "queue", "schedule", "hop",
    "jump", "move", "walk", "swap", "stick", "put", "throw", "mill", "scan", "sand", "drill",
    "ask", "wait"})
# What a machine is said to be, doing or having, that puts it in the lab now.
STATE_WORDS = PASSING_STATES | frozenset({
    "busy", "broken", "down", "idle", "ready", "use", "service", "loaded", "empty", "warm",
    "calibrated", "installed", "here", "there", "back", "next", "behind", "beside", "near",
    "room", "bench", "corner", "desk", "door", "wall", "shelf", "cabinet", "window",
    "upstairs", "downstairs", "lab", "workshop", "area", "out", "repair", "repairs",
    "maintenance", "option", "options", "bet", "choice", "alternative", "pick", "hall",
    "workbench", "corridor", "entrance", "✅"})
# A label before a name that offers it: "Alternative: the X", "Recommended: the X".
OFFER_LABELS = frozenset({"alternative", "alternatively", "recommended", "recommendation",
                          "option", "backup", "instead", "try", "use"})
ALTERNATIVES = frozenset({"instead", "rather", "alternative", "alternatively", "backup"})
LOCATIVE = frozenset({"in", "at", "on", "by", "beside", "behind", "near", "next", "upstairs",
                      "downstairs", "over"})


def _taken(verb: Token, noun: Token) -> bool:
    """Taken up: "use the X"; a negated one only of a definite machine ("don't use the X for
    PVC" says the lab has one; "don't use a X" does not). Not what someone has done ("if
    you've used an X before") or might do ("if you use an X")."""
    if any(c.dep_ == "aux" and c.lower_ in ("have", "'ve", "has", "had") for c in
           verb.children) or any(c.dep_ == "mark" and c.lower_ == "if" for c in verb.children):
        return False
    if not _negated(verb):
        return True
    return any(c.dep_ in ("det", "poss") and c.lower_ in ("the", "our", "this", "that")
               for c in noun.children)


def _offered(noun: Token) -> bool:
    """The name, or the list or apposition it belongs to ("our printers — the Form 4 and
    the X", "we've got two: the Y and an X"), is put in the lab."""
    if _offered_one(noun):
        return True
    top = noun
    while top.dep_ in ("conj", "appos") and top.head.i != top.i:
        top = top.head
        if _offered_one(top, listed=True):
            return True
    if not any(t.pos_ in ("VERB", "AUX") for t in noun.sent) and any(
            t.lower_ in STATE_WORDS for t in noun.sent if t.i > noun.i):
        return True  # a fragment or a table row: "X — ✅ free", "X | Workshop | Available"
    return False


def _offered_one(noun: Token, listed: bool = False) -> bool:
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
        if child.dep_ == "relcl" and child.lemma_ in HAVE and _is_lab(_subject(child)) and \
                not _negated(child):
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
            return _taken(verb, noun)  # "print it on the X", "go with the X"
    if noun.dep_ in ("dobj", "nsubjpass") and head.lemma_ in TAKE_UP_VERBS:
        return _taken(head, noun)
    if noun.dep_ == "dobj" and head.lemma_ in HAVE and _is_lab(_subject(head)) and \
            _negated(head) and _passing(head, noun):
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
    if noun.dep_ == "dobj" and head.lemma_ in HAVE and _is_lab(_subject(head)):
        return not _negated(head)  # "we have a Glowforge"
    if noun.dep_ in ("nsubj", "attr") and head.lemma_ == "be" and any(
            c.dep_ == "expl" for c in head.children) and head.dep_ in ("ROOT", "conj"):
        return not _negated(head)  # "there's a Glowforge in the back"
    if noun.dep_ in ("nsubj", "nsubjpass") and head.pos_ in ("VERB", "AUX", "ADJ"):
        said = [t for t in clause_of(head) if t.i not in {x.i for x in noun.subtree}]
        if any(t.lower_ in STATE_WORDS for t in said):
            return True  # "the X is free", "the X is booked until 3", "the X sits by the door"
        if any(c.dep_ == "aux" and c.lower_ in ("can", "will", "'ll", "could", "would")
               for c in head.children) and not _negated(head):
            return True  # "the X can cut that", "the X will handle it"
    if any(t.lower_ in ALTERNATIVES for t in noun.subtree if t.i != noun.i):
        return True  # "the X as a backup"
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
    if noun.dep_ == "attr" and head.lemma_ == "be" and _negated(head) and any(
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
        if verb.pos_ not in ("VERB", "AUX") or not _is_lab(_subject(verb)) or \
                not _negated(verb):
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
    if _in_question(head):
        return "asked"
    return "offered" if _offered(noun) else "unplaced"
