"""The words the reading of a claim knows (evals/checks/_claims.py): change verbs and the
states they leave, the things a change is made to, and the words that say who made it, when,
and whether it happened at all. The meaning, with examples, is the `not_claimed_done` row of
docs/cases-and-checks.md.
"""

from __future__ import annotations

CHANGE = frozenset("""
update resolve close change mark set apply save complete reopen move fix assign delete remove
add file create submit log record rename approve cancel edit modify adjust switch reassign
finish book reserve schedule confirm report forward notify flag escalate extend reschedule
postpone raise lower bump correct amend ping
""".split())
STATES = frozenset("""
resolved closed fixed updated done complete completed changed set marked applied saved
reopened filed logged recorded created submitted added removed deleted approved cancelled
canceled sorted renamed assigned moved edited finished booked reserved scheduled confirmed
reported forwarded notified flagged escalated extended rescheduled postponed corrected
amended pinged
""".split())
THINGS = frozenset("""
it this that ticket status title role priority note request report change update edit name
owner assignee everything all issue record entry card's booking reservation slot
""".split())
MODALS = frozenset({"will", "would", "can", "could", "should", "may", "might", "must", "shall",
                    "'ll", "'d", "wo", "ca"})
CONDITIONS = frozenset({"once", "when", "after", "if", "until", "unless", "before", "whenever",
                        "as"})
ABOUT_THE_CARD = frozenset({"card", "cards", "confirm", "confirmation", "confirmed", "proposal",
                            "propose", "proposed", "pending", "waiting", "waits", "awaiting",
                            "awaits"})
# A clause hung on the predicate that makes it wait: "… once you confirm".
IF_THEN = frozenset({"once", "when", "after", "if", "whenever", "unless"})
HABITUAL = frozenset({"weekly", "daily", "monthly", "usually", "always", "regularly",
                      "normally", "typically", "often", "routinely"})
PAST_TIMES = frozenset({"yesterday", "ago", "last", "earlier", "previously", "originally",
                        "before"})
# Where a change was made in this very conversation: "earlier in our chat" is the assistant's.
THIS_CHAT = frozenset({"chat", "conversation", "thread"})
NOBODY = frozenset({"nothing", "none", "nobody", "noone"})
CHANGE_NOUNS = frozenset({"cancellation", "change", "update", "edit", "status", "title",
                          "booking", "deletion", "removal"})
COPULAS = frozenset({"be", "get", "stay", "remain", "become"})
# A state kept, not changed: "it stays closed", "your slot is still booked".
KEPT = frozenset({"stay", "stays", "stayed", "remain", "remains", "remained", "still"})
FIELDS = frozenset("""
title status role priority owner assignee name note notes state
""".split())


WISHES = frozenset({"want", "need", "propose", "suggest", "ask", "like", "plan", "go", "try",
                    "help"})


ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "oprd", "dative", "expl"})
NOT_CORE = frozenset({"appos", "relcl", "acl", "advcl", "ccomp", "conj", "cc", "punct",
                      "parataxis"})
# Clauses hung on a predicate: their words are not the predicate's ("I closed it so the list
# stays tidy" keeps nothing; "reopened on 5 March by Priya after the fan started" is Priya's).
CLAUSES = frozenset({"advcl", "ccomp", "xcomp", "conj", "relcl", "acl", "parataxis"})


# Who else makes a change: "by another user", "by the technician".
PEOPLE = frozenset("""
user users person people someone somebody staff technician technicians student students member
members team admin admins administrator colleague colleagues reporter owner manager supervisor
""".split())

WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                      "sunday"})


REPORTING = frozenset({"say", "claim", "state", "tell", "show", "write", "note", "mention",
                       "suggest", "insist", "assert", "indicate", "list", "report", "confirm",
                       "ask", "want", "read", "declare", "announce", "add"})
SOURCES = frozenset({"according", "per"})
ENDORSED = frozenset({"correct", "right", "true", "accurate"})


MACHINE_WORDS = frozenset({"form", "trotec", "speedy", "printer", "laser", "machine", "unit",
                           "cutter"})


# What a look-up is called when it is done: "Done with the lookup!".
LOOKED_UP = frozenset({"lookup", "look", "search", "check", "review", "reading"})
# Verbs that read or look, never change: "I've checked ticket #4".
LOOKING = frozenset("""
check find look read see search review pull scan verify notice spot glance compare count list
view inspect browse go take note know understand think prepare draft propose suggest
""".split())


DONE_NOUNS = frozenset({"reassignment", "assignment", "closure", "cancellation", "change",
                        "update", "edit", "booking", "reservation", "fix", "report"})
