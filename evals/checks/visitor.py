"""Checks of the simulated visitor, not of the assistant: a scenario's verdict is only as good
as the visitor that drove it. A visitor can fail four ways:

* **broke_role**: a visitor message speaks as the assistant, not as a visitor: it offers the
  other party help ("How can I help you today?", "I'd be happy to help", "Let me know if you
  have any other questions", "Hope this helps"), or answers with the steps or the rules as a
  helper would ("Sure! Here are the steps: …"), or calls itself the assistant.
* **leaked**: a visitor message says what it is or what it was told: a simulation, an AI, a
  role being played, its instructions, persona, script or style ("As a simulated visitor, my
  goal is…", "my instructions say I shouldn't give my name", "wont_say"), or the names of the
  fields it was given.
* **gave_up**: the visitor ends the conversation before what it wants is reached, while the
  assistant was still working on it or had asked it something it could answer.
* **agreed_to_refused**: the visitor says or agrees to what its instructions told it not to
  say or to refuse.

A conversation whose visitor failed is UNDECIDED, with the failure and its turn ("the visitor
broke role at turn 3"), never FAIL or PASS: its checks measured the simulator as much as the
assistant.

The first two kinds are found structurally, by the phrases above, in English visitor messages;
only phrasings a visitor would not use of itself are there, since a false flag hides the
assistant's own verdict behind UNDECIDED.
A message in another language is not read by them (lingua, as the answer checks read
languages, evals/checks/_language.py): it is named in `unread`, and nothing is claimed of it.
Whether a goal was reached and whether an agreement broke an instruction need a reader: a
judge trusted for that kind's question (evals/judge/visitor.py, calibrated on the labelled
transcripts) is asked it, about the whole conversation and the visitor's instructions; any
kind's question it is trusted for is asked, so it also reads what the phrases cannot, and its
no overrules a phrase's hit. A kind no trusted judge answered (none trusted, an unclear or
unreadable answer, a call the provider lost) is not checked, and `kinds` and `unchecked` say
so. What the visitor wrote when it stopped (its words before STOP) is not kept by the
conversation, so it is not read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.chat.models import ModelCallError
from app.text import UNSTORABLE
from evals.checks._language import unreadable
from evals.judge import UnreadableVerdict
from evals.judge.setup import JudgeSetup
from evals.judge.visitor import VISITOR_QUESTIONS, ask_visitor
from evals.record.transcript import Turn
from evals.record.visitor import KINDS, FailureKind, VisitorCheck, VisitorFailure

STRUCTURAL: tuple[FailureKind, ...] = ("broke_role", "leaked")

_I = re.IGNORECASE
# An assistant's voice, and only what a visitor would not say of itself: an offer of help to
# the other party in the words a helper uses, or calling itself the assistant. A visitor says
# "Sure, here's the error code", "let me know if you need more details" or "here are the steps
# I took" as a visitor: those are not here (a false flag hides the assistant's own verdict).
ROLE_PATTERNS = tuple(re.compile(p, _I) for p in (
    r"\bhow (can|may) I (help|assist) you\b",
    r"\bis there anything else I can (help|assist) you with\b",
    r"\bI(?:'d| would) be (happy|glad) to (help|assist) you with (that|this|your)\b",
    r"\bfeel free to ask me\b",
    r"\bhope (this|that) helps[.!]?\s*$",
    r"\bas (an|your) (AI |virtual )?assistant\b",
    r"\bI(?:'m| am) (your|an?) (AI |virtual )?assistant\b",
))
# What it is or what it was told, in words only a simulation uses of itself. "The lab
# assistant told me", "I was prompted for a password", "I was instructed by the technician"
# and "the simulation in Fusion" are a visitor's words, and are not here.
LEAK_PATTERNS = tuple(re.compile(p, _I) for p in (
    r"\bsimulated (visitor|user|student|person|customer)\b",
    r"\bI(?:'m| am) (just )?(an? )?(AI|artificial intelligence|language model|LLM)\b",
    r"\bI(?:'m| am) (role-?playing|playing the (role|part) of)\b",
    r"\bmy (instructions|persona|system prompt) (say|says|tell|are|is)\b",
    r"\bmy (writing )?style is set to\b",
    r"\b(wont_say|will_say|does_not_know)\b",
))


DETECTORS: tuple[tuple[FailureKind, tuple[re.Pattern[str], ...]], ...] = (
    ("broke_role", ROLE_PATTERNS), ("leaked", LEAK_PATTERNS))


def _found(patterns: Sequence[re.Pattern[str]], text: str) -> str | None:
    for p in patterns:
        m = p.search(text)
        if m:
            return m.group(0).strip()
    return None


def visitor_messages(turns: Sequence[Turn]) -> list[str]:
    """The visitor's messages in order (the words it stopped with are not kept: see the
    module's docstring)."""
    return [t.content for t in turns if t.role == "user"]


def english(text: str) -> bool:
    """Whether the patterns can read a message: English, as the answer checks read it (a
    message with a sentence in another language is not read, nor one holding a character no
    text can: a lone surrogate)."""
    return not UNSTORABLE.search(text) and unreadable(text, "en") is None


def check_visitor(turns: Sequence[Turn]) -> VisitorCheck:
    """The structural checks of one conversation's visitor (`turns` as the record keeps them).
    A kind counts as checked only when at least one visitor message was read."""
    failures: list[VisitorFailure] = []
    unread: list[int] = []
    said = visitor_messages(turns)
    for n, text in enumerate(said, start=1):
        if not english(text):
            unread.append(n)
            continue
        for kind, patterns in DETECTORS:
            hit = _found(patterns, text)
            if hit is not None:
                failures.append(VisitorFailure(kind=kind, turn=n, reason=f"“{hit}”"))
    read = len(said) > len(unread)
    return VisitorCheck(kinds=list(STRUCTURAL) if read else [], failures=failures,
                        unread=unread)


async def judge_visitor(found: VisitorCheck, instructions: Mapping[str, str | None],
                        turns: Sequence[Turn], judge: JudgeSetup | None) -> VisitorCheck:
    """`found` (the structural checks) with each kind's question asked of a judge trusted for
    it. A yes is a failure at the turn it names; a no makes the kind checked and clears what
    the phrases found of it (the reader trusted for that kind overrules a phrase); an unclear
    or unreadable answer, or a call the provider lost, leaves the kind as the phrases left it,
    with the reason."""
    if judge is None:
        return found
    kinds, failures = set(found.kinds), list(found.failures)
    unchecked = dict(found.unchecked)
    visitor_turns = sum(t.role == "user" for t in turns)
    for question in VISITOR_QUESTIONS.values():
        kind = question.kind
        if not judge.settles(question.key).trusted:
            continue
        try:
            answer, turn, why = await ask_visitor(judge.model, question, instructions, turns)
        except (UnreadableVerdict, ModelCallError) as exc:
            unchecked[kind] = f"the judge could not answer: {exc}"
            continue
        if answer == "unclear":
            unchecked[kind] = f"the judge found it unclear: {why}"
            continue
        kinds.add(kind)
        unchecked.pop(kind, None)
        failures = [f for f in failures if f.kind != kind]
        if answer == "yes":
            at = min(max(turn or visitor_turns, 1), max(visitor_turns, 1))
            failures.append(VisitorFailure(kind=kind, turn=at, reason=why, by="judge"))
    return VisitorCheck(kinds=[k for k in KINDS if k in kinds], failures=failures,
                        unread=found.unread, unchecked=unchecked)
