"""The words the reading of a named machine knows (evals/checks/_stance.py): what having and
finding are, what the lab and its places are called, what a machine is, what passes, what a
person does, and the words that put a machine in the lab (taking it up, its states, its
places, an alternative). The meaning is the `no_unknown_tools` row of docs/cases-and-checks.md.
"""

from __future__ import annotations

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


PERSON_VERBS = frozenset({"walk", "help", "teach", "show", "explain", "supervise", "train",
                          "say", "tell", "know", "reply", "answer", "email", "meet", "sign",
                          "approve", "run", "lead", "host"})
PERSON_PLACES = frozenset({"team", "staff", "office", "desk", "department", "crew"})


TAKE_UP = frozenset({"grab", "use", "take", "book", "borrow", "arrive", "come", "collect",
                     "pick", "reserve", "try", "order", "fetch"})


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


OTHER_CLAUSES = frozenset({"conj", "parataxis", "advcl", "ccomp", "cc"})
