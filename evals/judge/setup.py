"""The judge of a run: its model, whether its verdicts decide (trust), and the evaluator pack
prompt it rates cases with instead of their own rubric, if any."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from app.chat.models import ChatModel
from evals.judge._ask import MAKERSPACE
from evals.judge.questions import QUESTIONS
from evals.judge.trust import Trust, trust
from evals.judge.visitor import VISITOR_QUESTIONS


@dataclass(frozen=True)
class PackPrompt:
    """One prompt of an evaluator pack (evals/judge/packs/PACK.yaml, loaded by
    evals/load/packs.py): a rubric and a must_not that rate every judged case."""

    pack: str
    name: str
    description: str
    rubric: str
    must_not: str | None

    @property
    def ref(self) -> str:
        return f"{self.pack}/{self.name}"

    def hash(self, template_hash: str) -> str:
        """The judge prompt's hash with this pack prompt in it."""
        material = json.dumps([template_hash, self.ref, self.rubric, self.must_not])
        return hashlib.sha256(material.encode()).hexdigest()[:16]


def prompt_hash_for(pack: PackPrompt | None) -> str:
    """The hash of what the judge is asked: the template, with the pack's prompt if any."""
    return pack.hash(MAKERSPACE.hash()) if pack else MAKERSPACE.hash()


@dataclass(frozen=True)
class JudgeSetup:
    """The judge for a run and whether its verdicts decide cases."""

    model: ChatModel
    trust: Trust
    forced: bool = False  # --trust-judge: decides although calibration did not earn it
    pack: PackPrompt | None = None  # --judge PACK/NAME: rates cases instead of their rubric
    pack_trust: Trust | None = None  # the pack prompt's own calibration: the base's is not it
    # --advisory-judge: an untrusted judge is asked anyway, its verdicts recorded as advisory.
    # Otherwise it is not called at all: a verdict nobody trusts is not worth its tokens.
    advisory: bool = False
    # Per question kind (evals/judge/questions.py), whether this judge settles an undecided
    # structural verdict with it: its own calibration, never the rubric prompt's.
    questions: dict[str, Trust] = field(default_factory=dict)

    def settles(self, question: str) -> Trust:
        """Whether this judge is asked a question of this kind, and why."""
        found = self.questions.get(question) or Trust(
            False, f"{self.model.model_id} has no calibration record for {question} questions")
        if self.forced and not found.trusted:
            return Trust(True, f"on --trust-judge only: {found.reason}")
        return found

    @property
    def prompt_hash(self) -> str:
        """The hash of what the judge is asked: the template, with the pack's prompt if any."""
        return prompt_hash_for(self.pack)

    @property
    def decides(self) -> bool:
        return self.trust.trusted or self.forced

    def asked(self, packed: bool = False) -> bool:
        """Whether the judge is called for a verdict under this prompt."""
        return self.trust_for(packed).trusted or self.forced or self.advisory

    def trust_for(self, packed: bool) -> Trust:
        """The trust of the prompt a verdict was given under: the pack's, or the base's."""
        return self.pack_trust if packed and self.pack_trust is not None else self.trust


def question_trusts(model_id: str) -> dict[str, Trust]:
    """The trust a judge model has earned for each question kind (evals/judge/judges.yaml):
    the narrow questions' and the simulated visitor's (`visitor_<kind>`)."""
    return {**{kind: trust(model_id, q.hash()) for kind, q in QUESTIONS.items()},
            **{q.key: trust(model_id, q.hash()) for q in VISITOR_QUESTIONS.values()}}
