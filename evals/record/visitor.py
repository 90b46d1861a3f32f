"""What the simulator checks found of a conversation's visitor (evals/checks/visitor.py says
what each kind means and how it is found): the kinds checked, the visitor messages not read,
and the failures, each at the visitor turn it happened."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

FailureKind = Literal["broke_role", "leaked", "gave_up", "agreed_to_refused"]
KINDS: tuple[FailureKind, ...] = ("broke_role", "leaked", "gave_up", "agreed_to_refused")
WORDS = {"broke_role": "broke role", "leaked": "leaked its instructions",
         "gave_up": "gave up before its goal", "agreed_to_refused":
         "agreed to what it was told to refuse"}


class VisitorFailure(BaseModel):
    """One failure of the simulated visitor: which, at which of its messages (1-based, its
    messages only), what showed it, and who found it (the patterns here, or a judge)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: FailureKind
    turn: int
    reason: str
    by: Literal["structural", "judge"] = "structural"

    def describe(self) -> str:
        return f"the visitor {WORDS[self.kind]} at turn {self.turn}: {self.reason}"


class VisitorCheck(BaseModel):
    """What was checked of a conversation's visitor and what was found: the kinds checked,
    the visitor messages not read (another language), and the failures."""

    model_config = ConfigDict(extra="forbid")
    kinds: list[FailureKind]
    failures: list[VisitorFailure] = []
    unread: list[int] = []  # visitor messages in a language the patterns cannot read
    # kind -> why a trusted judge did not answer its question (unclear, unreadable, lost)
    unchecked: dict[str, str] = {}

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def describe(self) -> str:
        if self.failures:
            return "; ".join(f.describe() for f in self.failures)
        left = [k for k in KINDS if k not in self.kinds]
        said = (f"no {', '.join(WORDS[k] for k in self.kinds)} found" if self.kinds
                else "nothing of the visitor checked")
        if self.unread:
            said += f" (messages {', '.join(map(str, self.unread))} not read: another language)"
        if left:
            said += "; not checked: " + ", ".join(
                WORDS[k] + (f" ({self.unchecked[k]})" if k in self.unchecked else "")
                for k in left)
        return said
