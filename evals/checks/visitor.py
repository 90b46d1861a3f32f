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

The first two kinds are found structurally, by the phrases above, in English visitor messages.
A message in another language is not read by them (lingua, as the answer checks read
languages, evals/checks/_language.py): it is named in `unread`, and nothing is claimed of it.
Whether a goal was reached and whether an agreement broke an instruction need a reader: a
judge trusted for that kind's question (evals/judge/visitor.py, calibrated on the labelled
transcripts) is asked it, about the whole conversation and the visitor's instructions; any
kind's question it is trusted for is asked, so it also reads what the phrases cannot. A kind
no trusted judge answered (none trusted, an unclear or unreadable answer, a failed call) is
not checked, and `kinds` says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.chat.models import ModelCallError
from evals.checks._language import unreadable
from evals.judge import UnreadableVerdict
from evals.judge.setup import JudgeSetup
from evals.judge.visitor import VISITOR_QUESTIONS, ask_visitor
from evals.record.transcript import Turn
from evals.record.visitor import KINDS, FailureKind, VisitorCheck, VisitorFailure

STRUCTURAL: tuple[FailureKind, ...] = ("broke_role", "leaked")

_I = re.IGNORECASE
# An assistant's voice: offers of help to the other party, a helper's answer, its identity.
ROLE_PATTERNS = tuple(re.compile(p, _I) for p in (
    r"\bhow (can|may|could) I (help|assist)( you)?\b",
    r"\b(is there )?anything else I can (help|do|assist)\b",
    r"\bI(?:'d| would| will|'ll) be (happy|glad|pleased) to (help|assist)\b",
    r"\bI can help you (with|to|find|book)\b",
    r"\blet me know if you (have|need) (any|anything)\b",
    r"\bfeel free to (ask|reach out)\b",
    r"\bhope (this|that) helps\b",
    r"^\W*(sure|certainly|of course|absolutely)\W+here(?:'s| is| are)\b",
    r"\bhere are the (steps|rules|instructions)\b",
    r"\bas (an|the|your) (AI |virtual |lab(?:'s)? )?assistant\b",
    r"\bI(?:'m| am) (the|your|an?) (AI |virtual |lab(?:'s)? |MakerLAB(?:'s)? )?assistant\b",
))
# What it is or what it was told.
LEAK_PATTERNS = tuple(re.compile(p, _I) for p in (
    r"\bsimulated (visitor|user|student|person|customer)\b",
    r"\b(this|the) simulation\b",
    r"\bI(?:'m| am) (just )?(an? )?(AI|artificial intelligence|language model|LLM|chatbot|bot)\b",
    r"\b(role-?play(ing)?|I(?:'m| am) playing (a|the) (role|part))\b",
    r"\bmy (instructions|persona|character|role description|system prompt|prompt)\b",
    r"\b(I was|I've been|I have been) (instructed|prompted|programmed)\b",
    r"\bmy (writing )?style is (set|calm|hurried|terse|chatty)\b",
    r"\b(wont_say|will_say|does_not_know|max_turns)\b",
    r"\bwhat (I|you) (will|won't|will not) say when asked\b",
))


DETECTORS: tuple[tuple[FailureKind, tuple[re.Pattern[str], ...]], ...] = (
    ("broke_role", ROLE_PATTERNS), ("leaked", LEAK_PATTERNS))


def _found(patterns: Sequence[re.Pattern[str]], text: str) -> str | None:
    for p in patterns:
        m = p.search(text)
        if m:
            return m.group(0).strip()
    return None


def visitor_messages(turns: Sequence[Turn], stop: str | None) -> list[str]:
    """The visitor's messages in order, its last one (the words it stopped with) included."""
    said = [t.content for t in turns if t.role == "user"]
    return [*said, stop] if stop else said


def english(text: str) -> bool:
    """Whether the patterns can read a message: English, as the answer checks read it (a
    message with a sentence in another language is not read)."""
    return unreadable(text, "en") is None


def check_visitor(turns: Sequence[Turn], stop: str | None) -> VisitorCheck:
    """The structural checks of one conversation's visitor (`turns` as the record keeps them,
    `stop` the message it stopped with, if any)."""
    failures: list[VisitorFailure] = []
    unread: list[int] = []
    for n, text in enumerate(visitor_messages(turns, stop), start=1):
        if not english(text):
            unread.append(n)
            continue
        for kind, patterns in DETECTORS:
            hit = _found(patterns, text)
            if hit is not None:
                failures.append(VisitorFailure(kind=kind, turn=n, reason=f"“{hit}”"))
    return VisitorCheck(kinds=list(STRUCTURAL), failures=failures, unread=unread)


async def judge_visitor(found: VisitorCheck, instructions: Mapping[str, str | None],
                        turns: Sequence[Turn], judge: JudgeSetup | None) -> VisitorCheck:
    """`found` (the structural checks) with each kind's question asked of a judge trusted
    for it: a yes is a failure at the turn it names, a no makes the kind checked; a kind the
    phrases already found is not asked again."""
    if judge is None:
        return found
    kinds, failures = set(found.kinds), list(found.failures)
    visitor_turns = sum(t.role == "user" for t in turns)
    for question in VISITOR_QUESTIONS.values():
        kind = question.kind
        if not judge.settles(question.key).trusted or any(f.kind == kind for f in failures):
            continue
        try:
            answer, turn, why = await ask_visitor(judge.model, question, instructions, turns)
        except (UnreadableVerdict, ModelCallError):
            continue  # never answered: the kind stays as the phrases left it
        if answer == "unclear":
            continue
        kinds.add(kind)
        if answer == "yes":
            at = min(max(turn or visitor_turns, 1), max(visitor_turns, 1))
            failures.append(VisitorFailure(kind=kind, turn=at, reason=why, by="judge"))
    return VisitorCheck(kinds=[k for k in KINDS if k in kinds], failures=failures,
                        unread=found.unread)
