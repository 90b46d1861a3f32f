"""The conversations a run holds: each scenario in each visitor style it runs in, with the
criteria that apply to it (its own, then the shared ones). A Conversation is an EvalItem
(evals/load/items.py): the runner schedules it as it schedules a case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from evals.checks import CheckSpec, NoArgs
from evals.checks.judged import CriterionArgs
from evals.load.context import Context
from evals.load.plan import check_content
from evals.load.scenarios import PHOTO_CUES, QUICK_STYLES, Scenario, Shared
from evals.record.results import Attack


def criteria_for(scenario: Scenario, shared: list[Shared]) -> list[CriterionArgs]:
    """The scenario's own criteria, then the shared ones that apply to it."""
    return [*scenario.criteria, *(s.criterion for s in shared if s.applies(scenario.id))]


@dataclass(frozen=True)
class Conversation:
    """One conversation of a run: a scenario in one visitor style, with the criteria that
    apply to it. The runner schedules it as it schedules a case (evals/load/items.py)."""

    scenario: Scenario
    style: str
    criteria: tuple[CriterionArgs, ...]

    @property
    def id(self) -> str:
        return f"{self.scenario.id}@{self.style}"

    @property
    def file(self) -> str:
        return self.scenario.file

    @property
    def line(self) -> int:
        return self.scenario.line

    @property
    def group(self) -> str | None:
        return self.scenario.group

    @property
    def attack(self) -> Attack | None:
        return self.scenario.attack

    @property
    def context(self) -> Context:
        return self.scenario.context

    @property
    def prompt(self) -> str:
        return self.scenario.opening or f"(the {self.style} visitor writes the first message)"

    @property
    def photos(self) -> tuple[str, ...]:
        """The photos the visitor sends: the plan hashes their files, and a chat model that
        takes no image input skips the conversation (evals/execute/runner.py)."""
        return self.scenario.photos

    @property
    def executor(self) -> Literal["conversation"]:
        return "conversation"

    @property
    def single_turn(self) -> bool:
        return False

    @property
    def max_turns(self) -> int:
        return self.scenario.max_turns

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id, self.scenario.id)

    @property
    def frozen_tools(self) -> frozenset[str]:
        return frozenset(self.scenario.tool_responses)

    @property
    def judged(self) -> bool:
        return bool(self.criteria)

    @property
    def where(self) -> str:
        return self.scenario.where

    @property
    def checks(self) -> tuple[CheckSpec, ...]:
        """Every turn answered, the expected actions, the end state, the assertions, then the
        criteria (required ones counted, informational ones reported)."""
        line = self.scenario.line
        return (CheckSpec("answered", NoArgs(), line),
                *(CheckSpec("expect_action", a, line) for a in self.scenario.expect_actions),
                *(CheckSpec("end_state", e, line) for e in self.scenario.end_state),
                *self.scenario.checks,
                *(CheckSpec("criterion", c, line, required=c.enforcement == "required")
                  for c in self.criteria))

    def content(self) -> dict[str, Any]:
        """What the plan fingerprint hashes: everything that decides what is asked and how."""
        s = self.scenario
        content: dict[str, Any] = {
            "scenario": s.id, "style": self.style, "context": s.context.model_dump(),
            "visitor": s.visitor.model_dump(), "opening": s.opening,
            "max_turns": s.max_turns, "confirm": s.confirm,
            "criteria": [c.model_dump() for c in self.criteria],
            "expect_actions": [a.model_dump() for a in s.expect_actions],
            "end_state": [e.model_dump() for e in s.end_state],
            "tool_responses": {k: v.content() for k, v in s.tool_responses.items()}}
        if s.response_state is not None:  # only then: a scenario without one keeps its hash
            content["response_state"] = s.response_state.model_dump(mode="json")
        if s.checks:  # a scenario without assertions hashes as it did before they existed
            content["checks"] = check_content(s.checks)
        if s.photos:  # and one without photos as before them (their files: the plan's fixtures)
            content.update(photos=list(s.photos), photo_turn=s.sends_photos_at,
                           qr_codes={p: list(codes) for p, codes in s.qr_codes.items()},
                           photo_cues=PHOTO_CUES)
        return content


def conversations(scenarios: list[Scenario], shared: list[Shared], *, full: bool
                  ) -> list[Conversation]:
    """Every conversation to run: calm only (quick) or every style a scenario allows (full)."""
    items = []
    for s in scenarios:
        styles = [st for st in s.styles if full or st in QUICK_STYLES] or list(s.styles[:1])
        for style in styles:
            items.append(Conversation(s, style, tuple(criteria_for(s, shared))))
    return items
