"""Surface readings of a named machine, for the sentences whose dependency parse misplaces
it ("The band saw is free" read with *saw* as a verb, a table row, a ticket line): a
comparison, a denial carried by a relative clause (or, left undecided, by a pronoun) after
the name, a machine listed as the lab's (a ticket or a unit), and a definite machine located
in the lab or used in a step of the visitor's work. evals/checks/_stance.py reads them beside
the parse. The meaning, with examples, is the `no_unknown_tools` row of
docs/cases-and-checks.md.
"""

from __future__ import annotations

import re

from evals.checks._parse import parse

_VERSUS = re.compile(r"\b(?:vs\.?|versus)\s*$", re.IGNORECASE)
_VERSUS_AFTER = re.compile(r"^\s*(?:vs\.?|versus)\b", re.IGNORECASE)

_LAB = r"(?:the\s+)?(?:makerlab|lab|we|our\s+lab|this\s+lab)"
_NEGATED_HAVE = (r"(?:doesn't|does\s+not|don't|do\s+not|has\s+never|have\s+never|never)\s+"
                 r"(?:have|had|stock|own|carry|carried)")
_NOT_BE = r"(?:isn't|is\s+not|aren't|are\s+not)"
# "…, which the MakerLAB doesn't have", "…, which isn't something MakerLAB has", "… —
# MakerLAB doesn't have one".
# The clause follows the name at once (an aside in parentheses, or the example a kind is
# given by, "an SLS printer like the Fuse 1, which …", between them at most).
_PLACES = r"(?:catalogue|catalog|lab|inventory|makerspace|makerlab)"
_DENIED_WHICH = re.compile(
    r"^\)?\s*(?:[\w+-]*\d[\w+-]*)?\s*(?:\([^)]*\)\s*)?"  # a model code, an aside
    r"(?:\s+(?:like|such\s+as)\s+[\w\s-]{1,40}?)?"  # "… like the Fuse 1"
    rf"(?:,\s*which\s+(?:{_LAB}\s+{_NEGATED_HAVE}\b|{_NOT_BE}\s+"
    rf"(?:something\s+{_LAB}\s+ha(?:s|ve)|part\s+of\s+(?:our|the|this)?\s*(?:\w+\s+)?{_PLACES}|"
    rf"in\s+(?:our|the|makerlab'?s?)\s+(?:\w+\s+)?{_PLACES}))"  # "…, which the lab doesn't have"
    # "— we don't have one"
    rf"|\s*[;—–]\s*(?:but\s+)?{_LAB}\s+{_NEGATED_HAVE}\s+(?:one|any)\s*(?:[.,;!)]|$))",
    re.IGNORECASE)
# "…, but it isn't part of the MakerLAB catalogue", "…, but they aren't in our catalogue": a
# later clause denies it by a pronoun; readers part ways on these (the labelled corpus has
# both verdicts), so the check leaves them undecided.
_DENIED_BY_PRONOUN = re.compile(
    rf"^[^.;!?]*?[,;—–]\s*(?:but|and)\s+(?:it|they|those|these|that)\s+{_NOT_BE}\s+"
    rf"(?:part\s+of|in\s+(?:our|the|makerlab's?)\s+(?:\w+\s+)?"
    rf"(?:catalogue|catalog|lab|inventory)|something\s+{_LAB}\s+ha(?:s|ve))", re.IGNORECASE)

# A ticket line or a unit label names the lab's machine: "#38 — Creality Ender 3: …",
# "Bambu Lab X1 Carbon #2"; a table row with a ticket, a state or a lab place.
_TICKET_LINE = re.compile(r"^\W*#\d+\W*(?:(?:[—–:-]|\|)\s*\W*)?$")
_UNIT_LABEL = re.compile(r"^\W*#\d+\b")
_ROW_CELL = re.compile(r"^(?:#\d+|free|available|busy|booked|in\s+use|broken|out\s+of\s+order|"
                       r"down|idle|ready|[\w\s]*\broom|bench\s+\d+)$", re.IGNORECASE)

# Where a definite machine stands in the lab: "the X next to the Trotec", "the X by the door",
# "the X in the corner", "the X at bench 2", "the X in the Laser room", "the X is free".
_HERE = re.compile(
    r"^(?:\s+[\w#-]+){0,3}?\s+(?:next\s+to|beside|behind|by\s+the\s+(?:door|window|sink|"
    r"wall|entrance)|on\s+the\s+shelf|in\s+the\s+(?:corner|back|laser\s+room|fab\w*\s+"
    r"room|digital\s+fab\w*\s+room)|(?:at|on)\s+bench\s+\d|down\s+the\s+hall|next\s+door|"
    r"upstairs|downstairs)\b|^\s+(?:is|are|'s)\s+(?:\w+\s+)?(?:free|available|booked|busy|broken|"
    r"idle|in\s+use|out\s+of\s+order)\b|^\s+(?:is|'s)\s+(?:\w+\s+)?(?:the\s+)?(?:better|best|"
    r"right)\s+(?:call|bet|option|choice|pick|tool)\b", re.IGNORECASE)
# A step of the visitor's work done in, on, with or by a definite machine: "Place the
# platform in the X", "then drill the holes on the X", "you can turn the handle on the X",
# "you'll need the X".
_YOU_CAN = re.compile(r"\byou(?:\s+can|'ll|\s+could|\s+will)\s+\w+", re.IGNORECASE)
_INTO = re.compile(r"\b(?:in|on|with|into|onto|to|through|using)\s+the\s+(?:[\w-]+\s+)?$",
                   re.IGNORECASE)
_YOU_NEED = re.compile(r"\byou(?:'ll|\s+will)?\s+(?:need|use|want)\s+the\s+(?:[\w-]+\s+)?$",
                       re.IGNORECASE)
_OR_THE = re.compile(r"^\W*or\s+the\s+$", re.IGNORECASE)
_DEFINITE = re.compile(r"\bthe\s+(?:[\w-]+\s+)?$", re.IGNORECASE)
# What a clause says that keeps a surface reading from deciding: a negation (grounding.py's
# count of the lab's machines reads it too), a supposition, a question.
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor)\b|n't\b", re.IGNORECASE)
_SUPPOSED = re.compile(r"\b(?:if|unless|whether|when)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;—–]|\s-\s|\b(?:but|so|because|since|although)\b", re.IGNORECASE)


def _denies_or_asks(text: str) -> bool:
    return NEGATION.search(text) is not None or "?" in text


def compared(sentence: str, start: int, end: int) -> bool:
    """A comparison: "Epilog vs Trotec?"."""
    return bool(_VERSUS.search(sentence[:start]) or _VERSUS_AFTER.match(sentence[end:]))


def denied_after(sentence: str, end: int) -> bool:
    """The lab's denial follows the name as a relative clause: "an SLS printer like the Fuse
    1, which the MakerLAB doesn't have"."""
    return _DENIED_WHICH.match(sentence[end:]) is not None


def denied_by_pronoun(sentence: str, end: int) -> bool:
    """A later clause of the sentence denies the name by a pronoun: "…, but it isn't
    something we have"."""
    return _DENIED_BY_PRONOUN.match(sentence[end:]) is not None


def listed_here(sentence: str, start: int, end: int) -> bool:
    """A ticket line or a unit label of the lab names the machine ("#38 — Creality Ender 3:
    …", "Bambu Lab X1 Carbon #2"), or a table row lists it with a ticket, a state or a lab
    place ("Epilog Fusion Pro 32 | Laser room | Available")."""
    if _TICKET_LINE.match(sentence[:start]) or _UNIT_LABEL.match(sentence[end:]):
        return True
    if "|" not in sentence or _denies_or_asks(sentence):
        return False
    cells = [c.strip(" *_`") for c in sentence.split("|")]
    return any(_ROW_CELL.match(c) for c in cells if c and sentence[start:end] not in c)


def _clause(sentence: str, start: int, end: int) -> tuple[str, str]:
    """The words of the name's clause before it and after it."""
    before = sentence[:start]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    after = sentence[end:]
    stop = _CLAUSE_END.search(after)
    return before[cut:], after[:stop.start()] if stop else after


def in_use_here(sentence: str, start: int, end: int) -> bool:
    """A definite machine ("the X") said to stand somewhere in the lab or to be free, or a
    step of the visitor's work done in, on or with it, in a clause that denies, supposes and
    asks nothing: the surface reading where the parse misplaces the name."""
    before, after = _clause(sentence, start, end)
    if _denies_or_asks(before + " " + after) or sentence.rstrip().endswith("?") or \
            _SUPPOSED.search(before) or not _DEFINITE.search(before):
        return False
    if _HERE.match(after):
        return True
    if _YOU_NEED.search(before) or _OR_THE.match(sentence[:start]):
        return True  # "you'll need the X"; "(Or the X, if the Trotec's queue gets long.)"
    if not _INTO.search(before):
        return False
    return _imperative(sentence, start - len(before), before) or \
        _YOU_CAN.search(before) is not None


_NOT_VERBS = frozenset({"the", "a", "an", "this", "that", "it", "its", "your", "our", "my",
                        "for", "to", "in", "on", "with", "and", "or", "if", "when", "as",
                        "all", "both", "each", "some", "any", "they", "we", "you", "he", "she",
                        "i", "there", "here", "which", "who", "what", "these", "those", "one"})


def _imperative(sentence: str, at: int, before: str) -> bool:
    """The clause opens with a verb in its base form and no subject ("Place the platform in
    …", "Then drill the holes on …", "…, put the parts in …"): a step for the visitor."""
    words = list(re.finditer(r"[A-Za-z][A-Za-z'-]*", before))
    while words and words[0].group().lower() in ("then", "first", "next", "just", "now",
                                                 "after", "that", "and"):
        words = words[1:]
    if not words or words[0].group().lower() in _NOT_VERBS:
        return False
    offset = at + words[0].start()
    token = next((t for t in parse(sentence) if t.idx <= offset < t.idx + len(t.text)), None)
    return token is not None and token.tag_ == "VB" and not any(
        c.dep_ in ("nsubj", "nsubjpass") for c in token.children)
